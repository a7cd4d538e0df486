import Glibc

/// The server's log: one line per event on standard error, as text or JSON, filtered by level.
///
/// One instance is made by the application and handed to whoever logs; there is no global logger.
/// A line carries the time, the level, the request id (or `-`), the message and named fields.
/// Messages and fields are built only when their level is enabled.
public final class Logger: Sendable {
    /// How severe a line is; a logger writes its own level and the more severe ones.
    public enum Level: Int, Sendable, Comparable, CaseIterable {
        case error, warn, info, debug

        /// `error`, `warn`, `info` or `debug`, as `--log-level` takes it.
        public var name: String {
            switch self {
            case .error: "error"
            case .warn: "warn"
            case .info: "info"
            case .debug: "debug"
            }
        }

        /// The level named `error`, `warn`, `info` or `debug`.
        public init?(name: String) {
            guard let level = Self.allCases.first(where: { $0.name == name }) else { return nil }
            self = level
        }

        public static func < (lhs: Level, rhs: Level) -> Bool { lhs.rawValue < rhs.rawValue }
    }

    /// Plain lines for people, or one JSON object per line for log collectors.
    public enum Format: String, Sendable {
        case text, json
    }

    /// The least severe level written.
    public let level: Level
    public let format: Format
    private let sink: @Sendable ([UInt8]) -> Void

    /// A logger writing lines of `level` and more severe to `sink` (standard error by default).
    public init(
        level: Level = .info, format: Format = .text,
        sink: @escaping @Sendable ([UInt8]) -> Void = Logger.standardError
    ) {
        self.level = level
        self.format = format
        self.sink = sink
    }

    /// Writes to file descriptor 2 at once: log lines are rare and must not wait in a buffer.
    public static let standardError: @Sendable ([UInt8]) -> Void = { bytes in
        bytes.withUnsafeBytes { pointer in _ = write(STDERR_FILENO, pointer.baseAddress, pointer.count) }
    }

    /// Whether lines of this level are written.
    public func isEnabled(_ level: Level) -> Bool { level <= self.level }

    /// Writes one line when `level` is enabled.
    public func log(
        _ level: Level, _ message: @autoclosure () -> String, requestID: String? = nil,
        fields: @autoclosure () -> [(String, String)] = []
    ) {
        guard isEnabled(level) else { return }
        sink(line(level, message(), requestID: requestID, fields: fields()))
    }

    public func error(
        _ message: @autoclosure () -> String, requestID: String? = nil,
        fields: @autoclosure () -> [(String, String)] = []
    ) { log(.error, message(), requestID: requestID, fields: fields()) }

    public func warn(
        _ message: @autoclosure () -> String, requestID: String? = nil,
        fields: @autoclosure () -> [(String, String)] = []
    ) { log(.warn, message(), requestID: requestID, fields: fields()) }

    public func info(
        _ message: @autoclosure () -> String, requestID: String? = nil,
        fields: @autoclosure () -> [(String, String)] = []
    ) { log(.info, message(), requestID: requestID, fields: fields()) }

    public func debug(
        _ message: @autoclosure () -> String, requestID: String? = nil,
        fields: @autoclosure () -> [(String, String)] = []
    ) { log(.debug, message(), requestID: requestID, fields: fields()) }

    /// One line in this logger's format, ending in a newline.
    func line(_ level: Level, _ message: String, requestID: String?, fields: [(String, String)]) -> [UInt8] {
        let id = requestID.flatMap { $0.isEmpty ? nil : $0 }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(64 + message.utf8.count)
        switch format {
        case .text:
            bytes += AccessLog.timestamp().utf8
            bytes.append(UInt8(ascii: " "))
            bytes += level.name.utf8
            bytes.append(UInt8(ascii: " "))
            Self.appendEscaped(id ?? "-", to: &bytes)
            bytes.append(UInt8(ascii: " "))
            Self.appendEscaped(message, to: &bytes)
            for (name, value) in fields {
                bytes.append(UInt8(ascii: " "))
                bytes += name.utf8
                bytes.append(UInt8(ascii: "="))
                Self.appendEscaped(value, to: &bytes)
            }
        case .json:
            bytes += #"{"time":""#.utf8
            bytes += AccessLog.timestamp().utf8
            bytes += #"","level":""#.utf8
            bytes += level.name.utf8
            bytes += #"","requestId":"#.utf8
            if let id { bytes += jsonQuoted(id) } else { bytes += "null".utf8 }
            bytes += #","message":"#.utf8
            bytes += jsonQuoted(message)
            bytes += #","fields":{"#.utf8
            for (index, field) in fields.enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                bytes += jsonQuoted(field.0)
                bytes.append(UInt8(ascii: ":"))
                bytes += jsonQuoted(field.1)
            }
            bytes += "}}".utf8
        }
        bytes.append(UInt8(ascii: "\n"))
        return bytes
    }

    /// Control characters become `\n`, `\t` or `\xNN`, so nothing logged can start a forged line.
    static func appendEscaped(_ text: String, to bytes: inout [UInt8]) {
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\n"): bytes += #"\n"#.utf8
            case UInt8(ascii: "\r"): bytes += #"\r"#.utf8
            case UInt8(ascii: "\t"): bytes += #"\t"#.utf8
            case 0..<0x20, 0x7f:
                let digits = Array("0123456789abcdef".utf8)
                bytes += [
                    UInt8(ascii: "\\"), UInt8(ascii: "x"), digits[Int(byte >> 4)], digits[Int(byte & 15)],
                ]
            default: bytes.append(byte)
            }
        }
    }
}
