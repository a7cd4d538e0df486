/// What `/openapi.json` says about one route. The routes themselves come from the router (the
/// source that routes); this is only their description, looked up by method and pattern.
struct RouteDocumentation: Sendable {
    /// Who may call it, decided by the route group and the handler.
    enum Access: Sendable {
        /// Anyone; credentials, when given, are read by the handler itself.
        case open
        /// Anyone, with access rules deciding what the caller (or the anonymous public) may do.
        case rules
        /// A logged-in user.
        case loggedIn
        /// An administrator.
        case administrator
    }

    /// A request or response body.
    enum Body: Sendable {
        /// A JSON document with the named schema in `components.schemas`.
        case schema(String)
        /// A JSON array of the named schema.
        case arrayOf(String)
        /// Bytes of any type (a blob).
        case bytes
        /// Plain text (metrics).
        case text
        /// `text/event-stream`.
        case eventStream
        /// No body.
        case empty
    }

    struct Parameter: Sendable {
        let name: String
        /// A JSON Schema type: `string`, `integer` or `boolean`.
        let type: String
        let description: String
        var location = "query"
    }

    let tag: String
    let summary: String
    let access: Access
    var parameters: [Parameter] = []
    var requestBody: Body? = nil
    /// Success answers by status; errors are described once, by `default`.
    let responses: [(status: Int, description: String, body: Body)]
    /// The schema of its errors: `Error`, or FatFractal's shape where FatFractal's clients read them.
    var errors = "Error"
}

extension RouteDocumentation {
    static let page = [
        Parameter(
            name: "start", type: "integer", description: "How many matching objects to skip (default 0)."),
        Parameter(
            name: "count", type: "integer",
            description: "At most this many objects (default 100, at most 1000)."),
        Parameter(name: "sort", type: "string", description: "`field [asc|desc]`, comma-separated."),
        Parameter(name: "total", type: "boolean", description: "`true`: also count every match (`total`)."),
    ]
    static let userFilter = Parameter(
        name: "user", type: "string", description: "Administrators: this user's (a guid).")
    static let cursor = [
        Parameter(name: "after", type: "string", description: "The previous page's `next`."),
        Parameter(
            name: "count", type: "integer", description: "At most this many (default 100, at most 1000)."),
    ]
    static let object = [(200, "The object.", Body.schema("Object"))]
    static let idempotency = Parameter(
        name: "Idempotency-Key", type: "string",
        description: "Makes a retried write answer as the first did (see docs/api.md, Idempotency-Key).",
        location: "header")
}
