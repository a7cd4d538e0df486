import Foundation
import Synchronization

/// Writes one line per request, buffered and flushed from a background thread.
///
/// Lines carry method, path, status, bytes and microseconds. Query values whose names suggest a
/// secret are replaced by `REDACTED`; bodies and headers are never logged.
public final class AccessLog: Sendable {
    private let buffer = Mutex<[UInt8]>([])
    private let sink: @Sendable ([UInt8]) -> Void
    /// Parts of query names whose values are never logged, matched in the decoded lower-cased name.
    static let sensitiveNames = [
        "token", "pass", "pwd", "secret", "key", "auth", "code", "signature", "session", "sessid",
        "credential", "jwt", "bearer", "otp", "cookie", "nonce", "csrf",
    ]

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
    public func record(
        method: String, target: String, remoteAddress: String, status: Int, bytes: Int, microseconds: UInt64
    ) {
        var line = Self.timestamp()
        line.reserveCapacity(line.utf8.count + target.utf8.count + 48)
        line += " "
        line += remoteAddress
        line += " "
        line += method
        line += " "
        line += target.contains("?") ? Self.redacted(target) : target
        line += " "
        line += String(status)
        line += " "
        line += String(bytes)
        line += "B "
        line += String(microseconds)
        line += "us\n"
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

    /// The target with secret-looking query values replaced. Names are percent-decoded before
    /// matching (so `%74oken=` is a token), but written as received: a decoded name could carry a
    /// line break into the log.
    static func redacted(_ target: String) -> String {
        guard let mark = target.firstIndex(of: "?") else { return target }
        let pairs = target[target.index(after: mark)...].split(
            separator: "&", omittingEmptySubsequences: false)
        let cleaned = pairs.map { pair -> Substring in
            guard let equals = pair.firstIndex(of: "=") else { return pair }
            let rawName = pair[..<equals]
            let name = (PercentEncoding.decode(rawName, plusAsSpace: true) ?? String(rawName)).lowercased()
            return isSensitive(name) ? rawName + "=REDACTED" : pair
        }
        return String(target[..<mark]) + "?" + cleaned.joined(separator: "&")
    }

    /// Whether a decoded, lower-cased query name looks like it carries a secret.
    static func isSensitive(_ name: String) -> Bool {
        sensitiveNames.contains { name.contains($0) }
    }

    /// `2026-11-29T15:00:00.123Z`, built without Foundation's slow formatter.
    static func timestamp() -> String {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        var seconds = now.tv_sec
        var parts = tm()
        gmtime_r(&seconds, &parts)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(24)
        func digits(_ value: Int, _ count: Int) {
            var divisor = 1
            for _ in 1..<count { divisor *= 10 }
            var rest = value
            while divisor > 0 {
                bytes.append(UInt8(48 + rest / divisor))
                rest %= divisor
                divisor /= 10
            }
        }
        digits(Int(parts.tm_year) + 1900, 4)
        bytes.append(45)
        digits(Int(parts.tm_mon) + 1, 2)
        bytes.append(45)
        digits(Int(parts.tm_mday), 2)
        bytes.append(84)
        digits(Int(parts.tm_hour), 2)
        bytes.append(58)
        digits(Int(parts.tm_min), 2)
        bytes.append(58)
        digits(Int(parts.tm_sec), 2)
        bytes.append(46)
        digits(Int(now.tv_nsec) / 1_000_000, 3)
        bytes.append(90)
        return String(decoding: bytes, as: UTF8.self)
    }
}
