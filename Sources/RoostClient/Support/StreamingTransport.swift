import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// An answer whose body is read as it arrives: for the realtime event stream, which does not end.
public struct TransportStream: Sendable {
    /// The HTTP status.
    public var status: Int
    /// Header names (lowercased) and values.
    public var headers: [String: String]
    /// The body's bytes in the chunks they came in; ending the iteration closes the connection.
    public var body: AsyncThrowingStream<Data, any Error>
    /// Closes the connection (reading it no further).
    public var close: @Sendable () -> Void

    /// A streamed answer from its parts; header names are lowercased.
    public init(
        status: Int, headers: [String: String] = [:], body: AsyncThrowingStream<Data, any Error>,
        close: @escaping @Sendable () -> Void = {}
    ) {
        self.status = status
        self.headers = Dictionary(headers.map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: { $1 })
        self.body = body
        self.close = close
    }
}

extension Transport {
    /// Sends `request` and returns its body as it arrives. This default waits for the whole answer
    /// and gives it as one chunk (a scripted transport's "connection" ends after its body); the
    /// URLSession transport streams.
    public func stream(_ request: TransportRequest) async throws -> TransportStream {
        let response = try await send(request)
        let (body, continuation) = AsyncThrowingStream.makeStream(of: Data.self)
        continuation.yield(response.body)
        continuation.finish()
        return TransportStream(status: response.status, headers: response.headers, body: body)
    }
}

extension URLSessionTransport {
    /// Streams the answer's body chunk by chunk through a data task's delegate (URLSession's
    /// `bytes(for:)` does not exist on Linux's Foundation). A chunk buffer left unread is bounded
    /// by whoever reads it; ending the iteration cancels the task, which closes the connection.
    public func stream(_ request: TransportRequest) async throws -> TransportStream {
        let delegate = StreamDelegate()
        let session = URLSession(configuration: configuration, delegate: delegate, delegateQueue: nil)
        let task = session.dataTask(with: try urlRequest(request))
        return try await delegate.start(task)
    }
}

/// One streamed request's URLSession delegate: the head once it comes, then each chunk.
final class StreamDelegate: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    // @unchecked Sendable: URLSession calls the delegate on its serial queue; `head` is behind a
    // lock, and the continuation of `body` is Sendable.
    private let head = Locked<CheckedContinuation<TransportStream, any Error>?>(nil)
    private let body: AsyncThrowingStream<Data, any Error>
    private let chunks: AsyncThrowingStream<Data, any Error>.Continuation

    override init() {
        (body, chunks) = AsyncThrowingStream.makeStream(of: Data.self)
        super.init()
    }

    func start(_ task: URLSessionDataTask) async throws -> TransportStream {
        // Whoever stops reading (or is cancelled) ends the request.
        chunks.onTermination = { _ in task.cancel() }

        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                head.withLock { $0 = continuation }
                task.resume()
            }
        } onCancel: {
            task.cancel()
        }
    }

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
    ) {
        let continuation = head.withLock { head in
            defer { head = nil }
            return head
        }
        if let http = response as? HTTPURLResponse {
            continuation?.resume(
                returning: TransportStream(
                    status: http.statusCode, headers: URLSessionTransport.headers(of: http), body: body,
                    close: { [chunks] in chunks.finish() }))
        } else {
            continuation?.resume(
                throwing: RoostError(
                    status: nil, code: RoostError.Code.invalidResponse, message: "The answer is not HTTP."))
        }
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        chunks.yield(data)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        // The session holds its delegate until invalidated.
        session.finishTasksAndInvalidate()
        let failure = error.map { error -> RoostError in
            if let urlError = error as? URLError { return URLSessionTransport.roostError(urlError) }
            return RoostError(
                status: nil, code: RoostError.Code.networkUnreachable,
                message: "The connection ended: \(error.localizedDescription).")
        }
        let continuation = head.withLock { head in
            defer { head = nil }
            return head
        }
        if let continuation {
            continuation.resume(
                throwing: failure
                    ?? RoostError(
                        status: nil, code: RoostError.Code.invalidResponse, message: "The answer had no head."
                    ))
        }
        if let failure { chunks.finish(throwing: failure) } else { chunks.finish() }
    }
}
