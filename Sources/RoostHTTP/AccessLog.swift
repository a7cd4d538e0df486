import Foundation
import RoostThreads
import Synchronization

/// Writes one line per request, buffered and flushed from a background thread.
///
/// Lines carry the client address, request id, method, path, status, bytes and microseconds. Query values whose names suggest a
/// secret are replaced by `REDACTED`; bodies and headers are never logged.
public final class AccessLog: Sendable {
    private let lines: PendingLines
    /// One thread that flushes every 0.2 s; it ends with the log.
    private let flusher: ThreadPool<Void>
    /// Parts of query names whose values are never logged, matched in the decoded lower-cased name.
    static let sensitiveNames = [
        "token", "pass", "pwd", "secret", "key", "auth", "code", "signature", "session", "sessid",
        "credential", "jwt", "bearer", "otp", "cookie", "nonce", "csrf",
    ]

    /// Lines as text (`time client request-id method target status bytes time`) or as JSON objects
    /// in the shape of ``Logger``'s lines.
    public let format: Logger.Format
    /// The answer header whose value is the request's id in the log.
    public static let requestIDHeader = "X-Request-Id"

    /// Logs to standard output.
    public convenience init(format: Logger.Format = .text) {
        self.init(format: format) { bytes in
            bytes.withUnsafeBytes { pointer in _ = write(STDOUT_FILENO, pointer.baseAddress, pointer.count) }
        }
    }

    /// Logs to a custom sink, for tests.
    public init(format: Logger.Format = .text, sink: @escaping @Sendable ([UInt8]) -> Void) {
        self.format = format
        let lines = PendingLines(sink: sink)
        self.lines = lines
        flusher = ThreadPool(name: "roost-access-log", threads: 1, tick: (0.2, { _ in lines.flush() }))
        flusher.start()
    }

    deinit {
        flusher.beginShutdown()
    }

    /// Appends one request's line.
    public func record(
        method: String, target: String, remoteAddress: String, requestID: String? = nil, status: Int,
        bytes: Int, microseconds: UInt64
    ) {
        let loggedTarget = target.contains("?") ? Self.redacted(target) : target
        let line: String
        switch format {
        case .text:
            var text = Self.timestamp()
            text.reserveCapacity(text.utf8.count + loggedTarget.utf8.count + 64)
            text += " "
            text += remoteAddress
            text += " "
            text += requestID ?? "-"
            text += " "
            text += method
            text += " "
            text += loggedTarget
            text += " "
            text += String(status)
            text += " "
            text += String(bytes)
            text += "B "
            text += String(microseconds)
            text += "us\n"
            line = text
        case .json:
            line = Self.jsonLine(
                method: method, target: loggedTarget, remoteAddress: remoteAddress, requestID: requestID,
                status: status, bytes: bytes, microseconds: microseconds)
        }
        lines.append(line)
    }

    private static func jsonLine(
        method: String, target: String, remoteAddress: String, requestID: String?, status: Int, bytes: Int,
        microseconds: UInt64
    ) -> String {
        var line: [UInt8] = Array(#"{"time":""#.utf8)
        line += timestamp().utf8
        line += #"","level":"info","requestId":"#.utf8
        line += requestID.map(jsonQuoted) ?? Array("null".utf8)
        line += #","message":"request","fields":{"client":"#.utf8
        line += jsonQuoted(remoteAddress)
        line += #","method":"#.utf8
        line += jsonQuoted(method)
        line += #","target":"#.utf8
        line += jsonQuoted(target)
        line += #","status":\#(status),"bytes":\#(bytes),"microseconds":\#(microseconds)}}"#.utf8
        line.append(UInt8(ascii: "\n"))
        return String(decoding: line, as: UTF8.self)
    }

    /// Writes out everything buffered.
    public func flush() {
        lines.flush()
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

/// The lines not yet written and where they go; shared by the log and its flushing thread,
/// which must not keep the log itself alive.
private final class PendingLines: Sendable {
    private let buffer = Mutex<[UInt8]>([])
    private let sink: @Sendable ([UInt8]) -> Void

    init(sink: @escaping @Sendable ([UInt8]) -> Void) {
        self.sink = sink
    }

    /// Appends a line; writes everything out once 64 KiB wait.
    func append(_ line: String) {
        let shouldFlush = buffer.withLock { pending in
            pending.append(contentsOf: line.utf8)
            return pending.count > 64 * 1024
        }
        if shouldFlush { flush() }
    }

    func flush() {
        let pending = buffer.withLock { pending in
            let taken = pending
            pending.removeAll(keepingCapacity: true)
            return taken
        }
        if !pending.isEmpty { sink(pending) }
    }
}
