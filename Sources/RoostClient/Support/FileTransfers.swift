import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// How far a transfer has come.
public struct TransferProgress: Sendable, Equatable {
    /// Bytes sent or received so far.
    public let bytes: Int64
    /// The whole size, when known.
    public let totalBytes: Int64?

    /// Progress from its parts.
    public init(bytes: Int64, totalBytes: Int64?) {
        self.bytes = bytes
        self.totalBytes = totalBytes
    }

    /// Between 0 and 1, when the size is known.
    public var fractionCompleted: Double? {
        totalBytes.flatMap { $0 > 0 ? Double(bytes) / Double($0) : nil }
    }
}

/// Called as a transfer goes, from URLSession's delegate queue.
public typealias ProgressHandler = @Sendable (TransferProgress) -> Void

extension Transport {
    /// Sends `request` with the file's bytes as its body. This default reads the whole file; the
    /// URLSession transport streams it from disk.
    public func upload(_ request: TransportRequest, fromFile file: URL, progress: ProgressHandler?)
        async throws
        -> TransportResponse
    {
        var request = request
        request.body = try Data(contentsOf: file)
        progress?(TransferProgress(bytes: Int64(request.body!.count), totalBytes: Int64(request.body!.count)))
        return try await send(request)
    }

    /// Sends `request` and, on a 2xx, writes the body to `file` (an error answer's body is
    /// returned instead). This default holds the body in memory; the URLSession transport
    /// streams it to disk.
    public func download(_ request: TransportRequest, toFile file: URL, progress: ProgressHandler?)
        async throws
        -> TransportResponse
    {
        var response = try await send(request)
        guard (200..<300).contains(response.status) else { return response }
        try response.body.write(to: file, options: .atomic)
        progress?(TransferProgress(bytes: Int64(response.body.count), totalBytes: Int64(response.body.count)))
        response.body = Data()
        return response
    }
}

/// One streamed transfer's URLSession delegate: progress, the answer, and for a download the
/// file moved into place before URLSession deletes it.
final class TransferDelegate: NSObject, URLSessionDataDelegate, URLSessionDownloadDelegate,
    @unchecked Sendable
{
    // @unchecked Sendable: URLSession calls the delegate on its own serial queue; `state` is
    // behind a lock (`Locked`: NSLocking.withLock needs iOS 17 on Apple platforms).
    private struct State {
        var body = Data()
        var continuation: CheckedContinuation<TransportResponse, any Error>?
        var failure: (any Error)?
    }

    private let state = Locked(State())
    private let destination: URL?
    private let progress: ProgressHandler?
    /// The most of an error answer's body kept: error bodies are small JSON.
    private static let errorBodyLimit = 64 * 1024
    /// The most of an upload's answer kept: the stored object, which the server caps at 10 MiB.
    static let answerBodyLimit = 16 << 20

    init(destination: URL?, progress: ProgressHandler?) {
        self.destination = destination
        self.progress = progress
    }

    func wait(for task: URLSessionTask) async throws -> TransportResponse {
        try await withCheckedThrowingContinuation { continuation in
            state.withLock { $0.continuation = continuation }
            task.resume()
        }
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, didSendBodyData bytesSent: Int64, totalBytesSent: Int64,
        totalBytesExpectedToSend: Int64
    ) {
        progress?(
            TransferProgress(
                bytes: totalBytesSent,
                totalBytes: totalBytesExpectedToSend > 0 ? totalBytesExpectedToSend : nil))
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        let tooLarge = state.withLock { state -> Bool in
            guard state.body.count + data.count <= Self.answerBodyLimit else {
                state.failure = RoostError(
                    status: nil, code: RoostError.Code.invalidResponse,
                    message:
                        "The server's answer to the upload is larger than \(Self.answerBodyLimit >> 20) MiB; is the URL a Roost server?"
                )
                return true
            }
            state.body.append(data)
            return false
        }
        if tooLarge { dataTask.cancel() }
    }

    func urlSession(
        _ session: URLSession, downloadTask: URLSessionDownloadTask, didWriteData bytesWritten: Int64,
        totalBytesWritten: Int64, totalBytesExpectedToWrite: Int64
    ) {
        progress?(
            TransferProgress(
                bytes: totalBytesWritten,
                totalBytes: totalBytesExpectedToWrite > 0 ? totalBytesExpectedToWrite : nil))
    }

    func urlSession(
        _ session: URLSession, downloadTask: URLSessionDownloadTask, didFinishDownloadingTo location: URL
    ) {
        let status = (downloadTask.response as? HTTPURLResponse)?.statusCode ?? 0
        do {
            if (200..<300).contains(status), let destination {
                // The file is deleted when this returns: move it now, replacing what was there.
                if FileManager.default.fileExists(atPath: destination.path) {
                    try FileManager.default.removeItem(at: destination)
                }
                try FileManager.default.moveItem(at: location, to: destination)
            } else {
                let handle = try FileHandle(forReadingFrom: location)
                defer { try? handle.close() }
                let body = try handle.read(upToCount: Self.errorBodyLimit) ?? Data()
                state.withLock { $0.body = body }
            }
        } catch {
            state.withLock { $0.failure = error }
        }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        let (continuation, body, failure) = state.withLock {
            state -> (CheckedContinuation<TransportResponse, any Error>?, Data, (any Error)?) in
            defer { state.continuation = nil }
            return (state.continuation, state.body, state.failure)
        }
        session.finishTasksAndInvalidate()
        if let error = failure ?? error {
            if let roostError = error as? RoostError {
                continuation?.resume(throwing: roostError)
            } else if let urlError = error as? URLError {
                continuation?.resume(throwing: URLSessionTransport.roostError(urlError))
            } else {
                continuation?.resume(
                    throwing: RoostError.storageFailed("save the download", error))
            }
            return
        }
        guard let http = task.response as? HTTPURLResponse else {
            continuation?.resume(
                throwing: RoostError(
                    status: nil, code: RoostError.Code.invalidResponse, message: "The answer is not HTTP."))
            return
        }
        continuation?.resume(
            returning: TransportResponse(
                status: http.statusCode, headers: URLSessionTransport.headers(of: http), body: body))
    }
}
