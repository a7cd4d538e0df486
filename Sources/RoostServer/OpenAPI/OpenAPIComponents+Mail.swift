extension OpenAPIComponents {
    /// The password-reset routes' bodies.
    static let mailSchemas = #"""
        {
          "PasswordResetRequest": {
            "type": "object", "required": ["email"],
            "properties": {"email": {"type": "string", "maxLength": 254}}
          },
          "PasswordResetAccepted": {
            "type": "object", "required": ["accepted", "message"],
            "description": "The same answer whether or not an account has the address.",
            "properties": {"accepted": {"const": true}, "message": {"type": "string"}}
          },
          "PasswordResetConfirm": {
            "type": "object", "required": ["token", "password"],
            "properties": {"token": {"type": "string", "maxLength": 128},
                           "password": {"type": "string", "minLength": 8}}
          },
          "PasswordResetDone": {
            "type": "object", "required": ["reset"], "properties": {"reset": {"const": true}}
          }
        }
        """#
}
