import Foundation

/// One Server-Sent Event as the SSE format defines it: what `id:`, `event:` and `data:` lines
/// gave, dispatched at a blank line.
struct ServerSentEvent: Sendable, Equatable {
    /// The `id:` of this block, when it had one (a heartbeat has an id and no data).
    var id: String?
    /// The `event:` name; `message` when none was given.
    var type: String
    /// The `data:` lines joined by line feeds.
    var data: String
}

/// Turns the bytes of an event stream into events and comments, whatever the chunking: lines end
/// with LF, CRLF or CR (a CRLF split across chunks counts once), as the SSE format allows.
struct ServerSentEventParser {
    /// What a blank line (or a comment line) produced.
    enum Output: Equatable {
        case event(ServerSentEvent)
        /// A line starting with `:`; the server explains endings in them.
        case comment(String)
    }

    /// The most bytes one line may have: a stored object is at most 10 MiB on the server.
    static let lineLimit = 16 << 20

    private var line: [UInt8] = []
    private var lastWasCarriageReturn = false
    private var id: String?
    private var type: String?
    private var data: [String] = []

    /// Parses `bytes`, returning what they completed.
    mutating func feed(_ bytes: some Sequence<UInt8>) throws -> [Output] {
        var outputs: [Output] = []
        for byte in bytes {
            if byte == 0x0A, lastWasCarriageReturn {
                lastWasCarriageReturn = false
                continue
            }
            lastWasCarriageReturn = byte == 0x0D
            if byte == 0x0A || byte == 0x0D {
                if let output = endLine() { outputs.append(output) }
                continue
            }
            guard line.count < Self.lineLimit else {
                throw RoostError(
                    status: nil, code: RoostError.Code.invalidResponse,
                    message: "The event stream sent a line longer than \(Self.lineLimit >> 20) MiB.")
            }
            line.append(byte)
        }
        return outputs
    }

    private mutating func endLine() -> Output? {
        defer { line.removeAll(keepingCapacity: true) }
        if line.isEmpty { return dispatch() }
        let text = String(decoding: line, as: UTF8.self)
        if text.hasPrefix(":") {
            return .comment(String(text.dropFirst()).trimmingCharacters(in: .whitespaces))
        }
        let field: Substring
        var value: Substring
        if let colon = text.firstIndex(of: ":") {
            field = text[..<colon]
            value = text[text.index(after: colon)...]
            if value.hasPrefix(" ") { value = value.dropFirst() }
        } else {
            (field, value) = (text[...], "")
        }
        switch field {
        case "id": if !value.contains("\0") { id = String(value) }
        case "event": type = String(value)
        case "data": data.append(String(value))
        default: break  // `retry:` and unknown fields: the SDK keeps its own backoff.
        }
        return nil
    }

    /// A blank line ends the block: an event when it had an id or data.
    private mutating func dispatch() -> Output? {
        defer { (id, type, data) = (nil, nil, []) }
        guard id != nil || !data.isEmpty else { return nil }
        return .event(ServerSentEvent(id: id, type: type ?? "message", data: data.joined(separator: "\n")))
    }
}
