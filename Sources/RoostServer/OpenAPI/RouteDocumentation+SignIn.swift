extension RouteDocumentation {
    /// Sign in with Apple and Google, and the identities they link.
    static let signInRoutes: [String: RouteDocumentation] = [
        "POST /ff/login/:provider": RouteDocumentation(
            tag: "accounts",
            summary:
                "Sign in with an Apple or Google ID token and the raw nonce (provider: apple or google); 201 when it made the account. 401 invalid_identity_token, identity_token_expired, wrong_audience, nonce_mismatch, nonce_replayed, unknown_key; 404 provider_not_configured; 503 provider_unavailable",
            access: .open, requestBody: .schema("IdentityTokenLogin"),
            responses: [
                (200, "The linked account's user and a session token.", .schema("Session")),
                (201, "A new account's user and a session token.", .schema("Session")),
            ]),
        "GET /ff/me/identities": RouteDocumentation(
            tag: "accounts", summary: "The caller's sign-in identities", access: .loggedIn,
            responses: [(200, "`items`: one per identity.", .schema("IdentityPage"))]),
        "POST /ff/me/identities/:provider": RouteDocumentation(
            tag: "accounts",
            summary: "Link the identity of an ID token to the caller's account (409 identity_taken)",
            access: .loggedIn, requestBody: .schema("IdentityTokenLogin"),
            responses: [(201, "The linked identity.", .schema("Identity"))]),
        "DELETE /ff/me/identities/:provider": RouteDocumentation(
            tag: "accounts",
            summary:
                "Unlink the caller's identity of a provider (404 identity_not_found; 409 last_sign_in_method when nothing else logs the account in)",
            access: .loggedIn, responses: [(204, "Unlinked.", .empty)]),
        "GET /ff/admin/identities": RouteDocumentation(
            tag: "administration", summary: "A user's sign-in identities", access: .administrator,
            parameters: [Parameter(name: "user", type: "string", description: "The user's guid (required).")],
            responses: [(200, "`items`: one per identity, with its userGuid.", .schema("IdentityPage"))]),
        "DELETE /ff/admin/identities/:provider": RouteDocumentation(
            tag: "administration",
            summary: "Unlink any user's identity of a provider (409 last_sign_in_method)",
            access: .administrator,
            parameters: [Parameter(name: "user", type: "string", description: "The user's guid (required).")],
            responses: [(204, "Unlinked.", .empty)]),
    ]
}

extension OpenAPIComponents {
    /// The schemas of signing in by ID token, merged into `components.schemas`.
    static let signInSchemas = #"""
        {
          "IdentityTokenLogin": {
            "type": "object", "required": ["idToken", "nonce"],
            "properties": {"idToken": {"type": "string", "maxLength": 8192},
                           "nonce": {"type": "string", "minLength": 16, "maxLength": 256},
                           "deviceId": {"type": "string"}, "deviceType": {"type": "string"},
                           "refresh": {"type": "boolean"}}
          },
          "Identity": {
            "type": "object", "required": ["provider", "subject", "email", "createdAt"],
            "properties": {"provider": {"type": "string", "enum": ["apple", "google"]}, "subject": {"type": "string"},
                           "email": {"type": ["string", "null"]}, "createdAt": {"type": "integer"},
                           "userGuid": {"type": "string"}}
          },
          "IdentityPage": {
            "type": "object", "required": ["items"],
            "properties": {"items": {"type": "array", "items": {"$ref": "#/components/schemas/Identity"}}}
          }
        }
        """#
}
