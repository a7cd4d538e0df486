extension RouteDocumentation {
    /// `POST /ff/refresh`.
    static let refreshRoutes: [String: RouteDocumentation] = [
        "POST /ff/refresh": RouteDocumentation(
            tag: "accounts",
            summary:
                "Exchange a refresh token for a new access token and refresh token (the presented one dies; reusing it ends the session)",
            access: .open, requestBody: .schema("RefreshRequest"),
            responses: [(200, "The new pair.", .schema("RefreshedSession"))])
    ]
}

extension OpenAPIComponents {
    /// The schemas of sessions that refresh, merged into `components.schemas`.
    static let refreshSchemas = #"""
        {
          "RefreshRequest": {
            "type": "object", "required": ["refreshToken"],
            "properties": {"refreshToken": {"type": "string", "maxLength": 256}}
          },
          "RefreshedSession": {
            "type": "object", "required": ["token", "tokenId", "userGuid", "expiresAt", "expiresIn", "refreshToken", "refreshExpiresAt"],
            "properties": {"token": {"type": "string"}, "tokenId": {"type": "string"}, "userGuid": {"type": "string"},
                           "expiresAt": {"type": "integer"}, "expiresIn": {"type": "integer"},
                           "refreshToken": {"type": "string"}, "refreshExpiresAt": {"type": "integer"}}
          }
        }
        """#
}
