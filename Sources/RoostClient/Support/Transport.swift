import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// One HTTP request as the SDK builds it; `path` is already percent-encoded and holds the query.
public struct TransportRequest: Sendable, Equatable {
    /// `GET`, `POST`, …
    public var method: String
    /// The path and query string, percent-encoded.
    public var path: String
    /// Header names and values.
    public var headers: [String: String]
    /// The body, if any.
    public var body: Data?

    /// A request from its parts.
    public init(method: String, path: String, headers: [String: String] = [:], body: Data? = nil) {
        self.method = method
        self.path = path
        self.headers = headers
        self.body = body
    }
}

/// One HTTP response; header names are lowercased.
public struct TransportResponse: Sendable, Equatable {
    /// The HTTP status.
    public var status: Int
    /// Header names and values.
    public var headers: [String: String]
    /// The body; empty for 204 and 304.
    public var body: Data

    /// A response from its parts; header names are lowercased.
    public init(status: Int, headers: [String: String] = [:], body: Data = Data()) {
        self.status = status
        self.headers = Dictionary(headers.map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: { $1 })
        self.body = body
    }

    /// A header's value, by case-insensitive name.
    public func header(_ name: String) -> String? { headers[name.lowercased()] }
}

/// What carries requests to the server: URLSession in apps, something in memory in unit tests.
public protocol Transport: Sendable {
    /// Sends a request and returns the server's answer, whatever its status; throws a
    /// ``RoostError`` with no status when no answer came.
    func send(_ request: TransportRequest) async throws -> TransportResponse

    /// Sends `request` with the file's bytes as its body, reporting progress.
    func upload(_ request: TransportRequest, fromFile file: URL, progress: ProgressHandler?) async throws
        -> TransportResponse

    /// Sends `request`, writing a 2xx answer's body to `file`, reporting progress.
    func download(_ request: TransportRequest, toFile file: URL, progress: ProgressHandler?) async throws
        -> TransportResponse

    /// Sends `request` and returns the answer's body as it arrives (the realtime event stream);
    /// ending the body's iteration closes the connection.
    func stream(_ request: TransportRequest) async throws -> TransportStream
}

/// ``Transport`` over URLSession, without URLSession's own cache (the SDK keeps its own).
public struct URLSessionTransport: Transport {
    /// The server requests go to.
    public let serverURL: URL
    private let session: URLSession
    let configuration: URLSessionConfiguration

    /// A transport to `serverURL` whose requests give up after `timeout` seconds.
    public init(serverURL: URL, timeout: TimeInterval = 30) {
        self.serverURL = serverURL
        let configuration = URLSessionConfiguration.ephemeral
        configuration.urlCache = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.timeoutIntervalForRequest = timeout
        configuration.httpCookieStorage = nil
        configuration.urlCredentialStorage = nil
        self.configuration = configuration
        session = URLSession(configuration: configuration)
    }

    /// Sends the request with URLSession.
    public func send(_ request: TransportRequest) async throws -> TransportResponse {
        let urlRequest = try urlRequest(request)
        let data: Data
        let response: URLResponse
        do {
            (data, response) = try await session.data(for: urlRequest)
        } catch let error as URLError {
            throw Self.roostError(error)
        } catch {
            throw RoostError(
                status: nil, code: RoostError.Code.networkUnreachable,
                message: "The request failed before an answer came: \(error.localizedDescription).")
        }
        guard let http = response as? HTTPURLResponse else {
            throw RoostError(
                status: nil, code: RoostError.Code.invalidResponse, message: "The answer is not HTTP.")
        }
        return TransportResponse(status: http.statusCode, headers: Self.headers(of: http), body: data)
    }

    static func headers(of http: HTTPURLResponse) -> [String: String] {
        var headers: [String: String] = [:]
        for (name, value) in http.allHeaderFields {
            if let name = name as? String, let value = value as? String { headers[name] = value }
        }
        return headers
    }

    /// Streams the file from disk as the body (memory stays bounded whatever its size).
    public func upload(_ request: TransportRequest, fromFile file: URL, progress: ProgressHandler?)
        async throws
        -> TransportResponse
    {
        let delegate = TransferDelegate(destination: nil, progress: progress)
        let session = URLSession(configuration: configuration, delegate: delegate, delegateQueue: nil)
        return try await delegate.wait(for: session.uploadTask(with: try urlRequest(request), fromFile: file))
    }

    /// Streams a 2xx answer's body into `file` (replacing it); an error answer's body is returned.
    public func download(_ request: TransportRequest, toFile file: URL, progress: ProgressHandler?)
        async throws
        -> TransportResponse
    {
        let delegate = TransferDelegate(destination: file, progress: progress)
        let session = URLSession(configuration: configuration, delegate: delegate, delegateQueue: nil)
        return try await delegate.wait(for: session.downloadTask(with: try urlRequest(request)))
    }

    func urlRequest(_ request: TransportRequest) throws -> URLRequest {
        guard let url = URL(string: serverURL.absoluteString.trimmingSuffix("/") + request.path) else {
            throw RoostError(
                status: nil, code: RoostError.Code.invalidQuery,
                message: "'\(request.path)' does not make a valid URL with \(serverURL).")
        }
        var urlRequest = URLRequest(url: url)
        urlRequest.httpMethod = request.method
        for (name, value) in request.headers { urlRequest.setValue(value, forHTTPHeaderField: name) }
        urlRequest.httpBody = request.body
        return urlRequest
    }

    static func roostError(_ error: URLError) -> RoostError {
        if error.code == .timedOut {
            return RoostError(
                status: nil, code: RoostError.Code.timeout,
                message: "The server did not answer in time; the request will be retried if it was queued.")
        }
        return RoostError(
            status: nil, code: RoostError.Code.networkUnreachable,
            message:
                "The server cannot be reached (\(error.code.rawValue)); check the network or the server URL.")
    }
}

extension String {
    func trimmingSuffix(_ suffix: String) -> String {
        hasSuffix(suffix) ? String(dropLast(suffix.count)) : self
    }
}
