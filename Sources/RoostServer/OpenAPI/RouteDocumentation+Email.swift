extension RouteDocumentation {
    /// E-mail verification and change.
    static let emailRoutes: [String: RouteDocumentation] = [
        "POST /ff/email/verify/request": RouteDocumentation(
            tag: "accounts",
            summary:
                "Mail a single-use verification link (24 hours) to the caller's address, or to the one given if an unverified account has it; the same 202 for every address (503 mail_not_configured, 429 too_many_email_requests)",
            access: .open, requestBody: .schema("EmailVerificationRequest"),
            responses: [(202, "Accepted, for every address.", .schema("EmailAccepted"))]),
        "POST /ff/email/verify/confirm": RouteDocumentation(
            tag: "accounts",
            summary:
                "Mark the account's address verified with a verification token (400 invalid_email_token)",
            access: .open, requestBody: .schema("EmailToken"),
            responses: [(200, "The address is verified.", .schema("EmailVerified"))]),
        "POST /ff/email/change": RouteDocumentation(
            tag: "accounts",
            summary:
                "Ask to change the caller's address, with their password: a link to the new address, a notice to the old; 202 whether or not the new address is taken (401 invalid_credentials, 403 password_not_set, 429 too_many_email_requests)",
            access: .loggedIn, requestBody: .schema("EmailChangeRequest"),
            responses: [(202, "Accepted.", .schema("EmailAccepted"))]),
        "POST /ff/email/change/confirm": RouteDocumentation(
            tag: "accounts",
            summary:
                "Apply an address change with its token; the new address is verified, and a user name that was the old address becomes the new (400 invalid_email_token, 409 conflict when the address was taken meanwhile)",
            access: .open, requestBody: .schema("EmailToken"),
            responses: [(200, "The address is changed.", .schema("EmailChanged"))]),
    ]
}

extension OpenAPIComponents {
    /// The e-mail routes' bodies, and registration's two answers.
    static let emailSchemas = #"""
        {
          "EmailVerificationRequest": {
            "type": "object", "description": "Logged in, the body may be {}: the caller's own address is used.",
            "properties": {"email": {"type": "string", "maxLength": 254}}
          },
          "EmailAccepted": {
            "type": "object", "required": ["accepted", "message"],
            "properties": {"accepted": {"const": true}, "message": {"type": "string"}}
          },
          "EmailToken": {
            "type": "object", "required": ["token"],
            "properties": {"token": {"type": "string", "maxLength": 128}}
          },
          "EmailVerified": {
            "type": "object", "required": ["verified", "email"],
            "properties": {"verified": {"const": true}, "email": {"type": "string"}}
          },
          "EmailChangeRequest": {
            "type": "object", "required": ["newEmail", "password"],
            "properties": {"newEmail": {"type": "string", "maxLength": 254}, "password": {"type": "string"}}
          },
          "EmailChanged": {
            "type": "object", "required": ["changed", "email"],
            "properties": {"changed": {"const": true}, "email": {"type": "string"}}
          },
          "Registered": {
            "oneOf": [
              {"$ref": "#/components/schemas/Session"},
              {"type": "object", "required": ["user", "emailVerificationRequired"],
               "properties": {"user": {"$ref": "#/components/schemas/Object"},
                              "emailVerificationRequired": {"const": true}}}
            ]
          }
        }
        """#
}
