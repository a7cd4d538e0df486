extension RouteDocumentation {
    /// Every route's description, by `METHOD pattern` as the router declares it. A route added
    /// without one fails `OpenAPITests` (and is listed with only its path in the document).
    static let byRoute: [String: RouteDocumentation] = coreRoutes.merging(mailRoutes) { core, _ in core }
        .merging(metadataRoutes) { core, _ in core }
        .merging(refreshRoutes) { core, _ in core }.merging(signInRoutes) { core, _ in core }
        .merging(adminRoutes) { core, _ in core }.merging(emailRoutes) { core, _ in core }

    static let coreRoutes: [String: RouteDocumentation] = [
        "GET /health": RouteDocumentation(
            tag: "system", summary: "Whether the server answers", access: .open,
            responses: [(200, "`{\"status\":\"ok\"}`", .schema("Health"))]),
        "GET /metrics": RouteDocumentation(
            tag: "system",
            summary: "Prometheus metrics (from --metrics-allow addresses, or for administrators)",
            access: .open, responses: [(200, "Prometheus text format 0.0.4.", .text)]),
        "GET /openapi.json": RouteDocumentation(
            tag: "system", summary: "This document", access: .open,
            responses: [(200, "OpenAPI 3.1.", .schema("OpenAPI"))]),

        "POST /ff/register": RouteDocumentation(
            tag: "accounts",
            summary:
                "Create an account and log it in; under --email-verification required, no session until the address is verified",
            access: .open, requestBody: .schema("Registration"),
            responses: [
                (
                    201, "The new user and a session token, or the user awaiting verification.",
                    .schema("Registered")
                )
            ]),
        "POST /ff/login": RouteDocumentation(
            tag: "accounts", summary: "Log in with a user name or e-mail and password", access: .open,
            requestBody: .schema("Credentials"),
            responses: [(200, "The user and a session token.", .schema("Session"))]),
        "POST /ff/tokens": RouteDocumentation(
            tag: "accounts", summary: "Create a session token (seed 003's token resource)", access: .open,
            requestBody: .schema("Credentials"),
            responses: [(201, "The user and a session token.", .schema("Session"))]),
        "POST /ff/logout": RouteDocumentation(
            tag: "accounts", summary: "End the caller's session", access: .open,
            responses: [(200, "Logged out (also when there was no session).", .schema("Anything"))]),
        "GET /ff/session": RouteDocumentation(
            tag: "accounts", summary: "Who the caller is", access: .open,
            responses: [(200, "`loggedIn`, and the user when logged in.", .schema("SessionState"))]),
        "GET /ff/tokens": RouteDocumentation(
            tag: "accounts", summary: "The caller's sessions", access: .loggedIn,
            responses: [(200, "`items`: one per session.", .schema("TokenPage"))]),
        "GET /ff/tokens/:id": RouteDocumentation(
            tag: "accounts", summary: "One of the caller's sessions", access: .loggedIn,
            responses: [(200, "The session.", .schema("Token"))]),
        "DELETE /ff/tokens/:id": RouteDocumentation(
            tag: "accounts", summary: "End one of the caller's sessions", access: .loggedIn,
            responses: [(204, "Ended.", .empty)]),
        "POST /ff/password": RouteDocumentation(
            tag: "accounts", summary: "Change the caller's password (ends the other sessions)",
            access: .loggedIn, requestBody: .schema("PasswordChange"),
            responses: [(200, "Changed.", .schema("Anything"))]),
        "GET /ff/admin/sessions": RouteDocumentation(
            tag: "administration", summary: "A user's sessions", access: .administrator,
            parameters: [Parameter(name: "user", type: "string", description: "The user's guid (required).")],
            responses: [(200, "`items`: one per session.", .schema("TokenPage"))]),
        "DELETE /ff/admin/sessions/:id": RouteDocumentation(
            tag: "administration", summary: "End any session", access: .administrator,
            responses: [(204, "Ended.", .empty)]),

        "POST /ff/resources/:collection": RouteDocumentation(
            tag: "objects", summary: "Create an object", access: .rules, parameters: [idempotency],
            requestBody: .schema("ObjectInput"), responses: [(201, "The stored object.", .schema("Object"))]),
        "GET /ff/resources/:collection": RouteDocumentation(
            tag: "objects", summary: "List a collection", access: .rules, parameters: page,
            responses: [(200, "A page of objects.", .schema("ObjectPage"))]),
        "GET /ff/resources/:collection/*query": RouteDocumentation(
            tag: "objects", summary: "Query a collection: `(field eq 'value' and …)`", access: .rules,
            parameters: page, responses: [(200, "A page of the matching objects.", .schema("ObjectPage"))]),
        "GET /ff/resources/:collection/:guid": RouteDocumentation(
            tag: "objects", summary: "Read an object", access: .rules,
            parameters: [
                Parameter(
                    name: "depthRef", type: "integer",
                    description: "Inline referenced objects this deep (0–3).")
            ],
            responses: object + [(304, "Not modified (If-None-Match).", .empty)]),
        "PUT /ff/resources/:collection/:guid": RouteDocumentation(
            tag: "objects", summary: "Replace an object (If-Match for a version)", access: .rules,
            parameters: [idempotency], requestBody: .schema("ObjectInput"), responses: object),
        "PATCH /ff/resources/:collection/:guid": RouteDocumentation(
            tag: "objects", summary: "Merge-patch an object (RFC 7396)", access: .rules,
            parameters: [idempotency],
            requestBody: .schema("ObjectInput"), responses: object),
        "DELETE /ff/resources/:collection/:guid": RouteDocumentation(
            tag: "objects", summary: "Delete an object", access: .rules, parameters: [idempotency],
            responses: [(204, "Deleted.", .empty)]),
        "PUT /ff/resources/:collection/:guid/ffACL": RouteDocumentation(
            tag: "objects", summary: "Set an object's access list", access: .rules, parameters: [idempotency],
            requestBody: .schema("AccessList"), responses: [(200, "The access list.", .schema("AccessList"))]),
        "DELETE /ff/resources/:collection/:guid/ffACL": RouteDocumentation(
            tag: "objects", summary: "Remove an object's access list", access: .rules,
            parameters: [idempotency],
            responses: [(204, "Removed: the collection's rules apply.", .empty)]),
        "GET /ff/resources/:collection/:guid/:member": RouteDocumentation(
            tag: "blobs", summary: "Read a member: a blob's bytes (Range), a reference's object, or `ffACL`",
            access: .rules,
            responses: [
                (200, "The blob's bytes, or the referenced object.", .bytes), (206, "A range.", .bytes),
            ]),
        "PUT /ff/resources/:collection/:guid/:member": RouteDocumentation(
            tag: "blobs", summary: "Upload a blob member (streamed; Content-Type is kept)", access: .rules,
            parameters: [idempotency], requestBody: .bytes, responses: object),
        "DELETE /ff/resources/:collection/:guid/:member": RouteDocumentation(
            tag: "blobs", summary: "Remove a blob member", access: .rules, parameters: [idempotency],
            responses: [(204, "Removed.", .empty)]),

        "GET /ff/events": RouteDocumentation(
            tag: "realtime", summary: "Server-Sent Events for collections, objects and queries",
            access: .rules,
            parameters: [
                Parameter(name: "collection", type: "string", description: "One collection's changes."),
                Parameter(name: "guid", type: "string", description: "With collection: one object's."),
                Parameter(name: "query", type: "string", description: "With collection: a query's matches."),
                Parameter(
                    name: "subscribe", type: "string",
                    description: "Several: `Collection`, `Collection/guid` or `Collection/(query)`, repeated."
                ),
                Parameter(name: "since", type: "integer", description: "Resume after this event id."),
            ],
            responses: [
                (200, "A stream of `create`, `update`, `delete`, `enter` and `leave` events.", .eventStream)
            ]),

        "PUT /ff/push/devices/:deviceId": RouteDocumentation(
            tag: "push", summary: "Register this device's push token", access: .loggedIn,
            requestBody: .schema("PushRegistration"), responses: [(200, "The device.", .schema("PushDevice"))]
        ),
        "GET /ff/push/devices": RouteDocumentation(
            tag: "push", summary: "The caller's push devices (administrators: anyone's)", access: .loggedIn,
            parameters: [userFilter] + cursor,
            responses: [(200, "A page of devices.", .schema("PushDevicePage"))]),
        "DELETE /ff/push/devices/:deviceId": RouteDocumentation(
            tag: "push", summary: "Forget a device's push token", access: .loggedIn, parameters: [userFilter],
            responses: [(204, "Forgotten.", .empty)]),
        "POST /ff/push": RouteDocumentation(
            tag: "push", summary: "Send a push to users, devices or a query's users", access: .administrator,
            requestBody: .schema("PushRequest"), responses: [(202, "Queued.", .schema("PushQueued"))]),
        "GET /ff/push/:id": RouteDocumentation(
            tag: "push", summary: "A push's deliveries", access: .administrator,
            responses: [(200, "Each device's state.", .schema("PushStatus"))]),

        "GET /ff/ext/:name": extensionCall, "POST /ff/ext/:name": extensionCall,
        "PUT /ff/ext/:name": extensionCall, "PATCH /ff/ext/:name": extensionCall,
        "DELETE /ff/ext/:name": extensionCall,
    ]

    static let extensionCall = RouteDocumentation(
        tag: "scripts", summary: "Call a server-side extension (roost.json `extensions`)", access: .rules,
        requestBody: .schema("Anything"),
        responses: [(200, "What the extension answers.", .schema("Anything"))], errors: "FatFractalError")
}
