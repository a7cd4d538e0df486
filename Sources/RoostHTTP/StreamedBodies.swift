import Glibc
import Synchronization

/// Where a streamed request body goes as it arrives. Writing must not block the event loop, so a
/// sink queues the bytes and does its I/O elsewhere, and pushes back when it falls behind.
public protocol RequestBodySink: AnyObject, Sendable {
    /// Queues the next bytes. Returns false when the sink is backed up: the connection stops
    /// reading until the closure given to ``whenReady(_:)`` is called.
    func write(_ bytes: ArraySlice<UInt8>) -> Bool
    /// Calls `resume` (from any thread) once the sink can take more; at once if it already can.
    func whenReady(_ resume: @escaping @Sendable () -> Void)
    /// Waits for every queued write; what the handler receives as ``Request/streamedBody``.
    /// Throws if any write failed (the partial file is removed).
    func finish() async throws -> StreamedBody
    /// The request failed or the connection closed: remove what was written.
    func discard()
}

/// A request body that went to a file instead of memory.
public struct StreamedBody: Sendable {
    /// The file holding the bytes; the handler moves or removes it.
    public let path: String
    public let size: Int
    /// What the sink computed on the way (a digest, say), for the handler.
    public let digest: [UInt8]
    /// The first bytes, for detecting the content type.
    public let prefix: [UInt8]

    public init(path: String, size: Int, digest: [UInt8], prefix: [UInt8]) {
        self.path = path
        self.size = size
        self.digest = digest
        self.prefix = prefix
    }
}

/// A range of an open file sent as a response body with `sendfile`, never read into memory.
public final class ResponseFile: Sendable {
    private let descriptor: Mutex<Int32>
    public let offset: Int
    public let length: Int

    /// Takes ownership of `descriptor`; it is closed once sent, or when the response is dropped.
    public init(descriptor: Int32, offset: Int, length: Int) {
        self.descriptor = Mutex(descriptor)
        self.offset = offset
        self.length = length
    }

    /// Hands the descriptor over (once); the caller closes it.
    func take() -> Int32 {
        descriptor.withLock { descriptor in
            defer { descriptor = -1 }
            return descriptor
        }
    }

    deinit {
        let descriptor = take()
        if descriptor >= 0 { close(descriptor) }
    }
}
