import Foundation
import Synchronization

/// Writes one line per request, buffered and flushed from a background thread.
///
/// Lines carry method, path, status, bytes and microseconds. Query values whose names suggest a
/// secret are replaced by `REDACTED`; bodies and headers are never logged.
public final class AccessLog: Sendable {
    private let buffer = Mutex<[UInt8]>([])
    private let sink: @Sendable ([UInt8]) -> Void
    private static let sensitiveNames = ["token", "password", "secret", "key", "auth", "code", "signature"]

    /// Logs to standard output.
    public convenience init() {
        self.init { bytes in
            bytes.withUnsafeBytes { pointer in _ = write(STDOUT_FILENO, pointer.baseAddress, pointer.count) }
        }
    }

    /// Logs to a custom sink, for tests.
    public init(sink: @escaping @Sendable ([UInt8]) -> Void) {
        self.sink = sink
        let thread = Thread { [weak self] in
            while let log = self {
                log.flush()
                Thread.sleep(forTimeInterval: 0.2)
            }
        }
        thread.name = "roost-access-log"
        thread.start()
    }

    /// Appends one request's line.
    public func record(method: String, target: String, remoteAddress: String, status: Int, bytes: Int, microseconds: UInt64) {
        let line = "\(Self.timestamp()) \(remoteAddress) \(method) \(Self.redacted(target)) \(status) \(bytes)B \(microseconds)us\n"
        let shouldFlush = buffer.withLock { pending in
            pending.append(contentsOf: line.utf8)
            return pending.count > 64 * 1024
        }
        if shouldFlush { flush() }
    }

    /// Writes out everything buffered.
    public func flush() {
        let pending = buffer.withLock { pending in
            let taken = pending
            pending.removeAll(keepingCapacity: true)
            return taken
        }
        if !pending.isEmpty { sink(pending) }
    }

    /// The target with secret-looking query values replaced.
    static func redacted(_ target: String) -> String {
        guard let mark = target.firstIndex(of: "?") else { return target }
        let pairs = target[target.index(after: mark)...].split(separator: "&", omittingEmptySubsequences: false)
        let cleaned = pairs.map { pair -> String in
            let name = pair.split(separator: "=", maxSplits: 1).first.map { String($0).lowercased() } ?? ""
            if sensitiveNames.contains(where: { name.contains($0) }) { return "\(name)=REDACTED" }
            return String(pair)
        }
        return String(target[..<mark]) + "?" + cleaned.joined(separator: "&")
    }

    private static func timestamp() -> String {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        var seconds = now.tv_sec
        var parts = tm()
        gmtime_r(&seconds, &parts)
        return String(
            format: "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", parts.tm_year + 1900, parts.tm_mon + 1, parts.tm_mday,
            parts.tm_hour, parts.tm_min, parts.tm_sec, now.tv_nsec / 1_000_000)
    }
}
