/// An HTTP response a handler returns.
public struct Response: Sendable {
    /// The status code.
    public var status: Int
    /// Header fields; `Content-Length`, `Date` and `Connection` are added by the server.
    public var headers: HTTPHeaders
    /// The body bytes.
    public var body: [UInt8]
    /// A file range sent instead of ``body`` (which must then be empty).
    public var file: ResponseFile?
    /// A body produced over time instead of ``body``: sent without a length, the connection
    /// closing when it ends.
    public var stream: ResponseStream?
    /// The route pattern that produced this response, for metrics; never sent.
    public var route: String?

    /// Makes a response.
    public init(status: Int, headers: HTTPHeaders = HTTPHeaders(), body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// A response with a JSON body already serialised.
    public static func json(_ status: Int, _ body: [UInt8], headers: HTTPHeaders = HTTPHeaders()) -> Response
    {
        var headers = headers
        headers.set("Content-Type", "application/json; charset=utf-8")
        return Response(status: status, headers: headers, body: body)
    }

    /// The standard reason phrase for a status code.
    public static func reasonPhrase(for status: Int) -> String {
        switch status {
        case 100: "Continue"
        case 200: "OK"
        case 201: "Created"
        case 204: "No Content"
        case 206: "Partial Content"
        case 304: "Not Modified"
        case 308: "Permanent Redirect"
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 408: "Request Timeout"
        case 409: "Conflict"
        case 411: "Length Required"
        case 412: "Precondition Failed"
        case 413: "Content Too Large"
        case 415: "Unsupported Media Type"
        case 416: "Range Not Satisfiable"
        case 417: "Expectation Failed"
        case 429: "Too Many Requests"
        case 431: "Request Header Fields Too Large"
        case 500: "Internal Server Error"
        case 501: "Not Implemented"
        case 503: "Service Unavailable"
        case 505: "HTTP Version Not Supported"
        default: "Status \(status)"
        }
    }
}

/// What handles requests: the router, or anything that maps a request to a response.
public protocol Responder: Sendable {
    /// Answers one request. Errors that escape are turned into a 500 by the server.
    func respond(to request: Request) async -> Response
    /// Decides, when the head of a request with a streamed body arrives (before `100 Continue`
    /// and before a byte of the body is read), whether it may proceed: nil admits it, a response
    /// refuses it and the connection closes without reading the body.
    func admit(_ request: Request) async -> Response?
}

extension Responder {
    public func admit(_ request: Request) async -> Response? { nil }
}

/// A protocol-level failure the server answers itself, before any handler runs.
public struct HTTPProtocolError: Error, Sendable, Equatable {
    /// The status to answer with.
    public let status: Int
    /// A stable snake_case code.
    public let code: ErrorCode
    /// A human sentence saying what to do.
    public let message: String
    /// Seconds the client should wait before trying again, sent as `Retry-After`.
    public let retryAfter: Int?

    public init(status: Int, code: ErrorCode, message: String, retryAfter: Int? = nil) {
        self.status = status
        self.code = code
        self.message = message
        self.retryAfter = retryAfter
    }
}
