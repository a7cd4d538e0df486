// Line scanning and chunked framing (RFC 9112 sections 2.2 and 7.1), strict: every line ends with
// CRLF, a chunk size is 1 to 16 hexadecimal digits and nothing else, and extensions and trailers
// carry no control characters.

/// Where the line that starts at the parser's position ends.
enum LineEnd: Equatable {
    /// The index of the line's CR (its CRLF follows).
    case found(Int)
    case incomplete
    /// A LF not preceded by CR: refused, since another parser may read it as a line end.
    case bareLineFeed
    /// No line end within the limit.
    case tooLong
}

/// What a chunk size line says.
enum ChunkSize: Equatable {
    case size(Int)
    /// A valid size too large for any body limit.
    case tooLarge
    case invalid(String)
}

extension RequestParser {
    /// Bytes a chunk size line may have, extensions included.
    static let maxChunkLineBytes = 1024
    /// Consumed bytes dropped from the front of the buffer before more are appended.
    static let compactionThreshold = 64 * 1024

    static func invalid(_ message: String) -> HTTPProtocolError {
        HTTPProtocolError(status: 400, code: .invalidRequest, message: message)
    }

    /// Finds the blank line that ends a head, refusing a bare LF anywhere in it.
    mutating func findHeadEnd() -> LineEnd {
        var index = max(scanned, position)
        while index < buffer.count {
            if buffer[index] == 10 {
                guard index > position, buffer[index - 1] == 13 else { return .bareLineFeed }
                if index - 3 >= position && buffer[index - 2] == 10 && buffer[index - 3] == 13 {
                    return .found(index - 3)
                }
            }
            index += 1
        }
        scanned = buffer.count
        return .incomplete
    }

    /// Finds the CRLF that ends the line at the position, within `limit` bytes.
    func findLineEnd(limit: Int) -> LineEnd {
        var index = position
        let end = min(buffer.count, position + max(0, limit) + 2)
        while index < end {
            if buffer[index] == 10 {
                guard index > position, buffer[index - 1] == 13 else { return .bareLineFeed }
                return .found(index - 1)
            }
            index += 1
        }
        return buffer.count - position > max(0, limit) + 1 ? .tooLong : .incomplete
    }

    /// Parses `1*16HEXDIG [ BWS ";" extension ]`; never a sign, a prefix or a space alone.
    static func chunkSize(_ line: ArraySlice<UInt8>) -> ChunkSize {
        var value: UInt64 = 0
        var digits = 0
        var index = line.startIndex
        while index < line.endIndex, let digit = PercentEncoding.hexValue(line[index]) {
            digits += 1
            guard digits <= 16 else {
                return .invalid("A chunk size has more than 16 hexadecimal digits.")
            }
            value = value << 4 | UInt64(digit)
            index += 1
        }
        guard digits > 0 else { return .invalid("A chunk size must start with a hexadecimal digit.") }
        var rest = line[index...]
        if !rest.isEmpty {
            rest = rest.drop(while: { $0 == 32 || $0 == 9 })
            guard rest.first == UInt8(ascii: ";") else {
                return .invalid(
                    "A chunk size is hexadecimal digits, optionally followed by ';' and an extension.")
            }
            guard rest.allSatisfy(isFieldByte) else {
                return .invalid("A chunk extension contains a control character.")
            }
        }
        return value > UInt64(Int.max) ? .tooLarge : .size(Int(value))
    }

    /// Why a trailer line is malformed, or nil when it is a valid `name: value` field.
    static func fieldLineProblem(_ line: ArraySlice<UInt8>) -> String? {
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")), colon > line.startIndex,
            line[line.startIndex..<colon].allSatisfy(isTokenByte)
        else { return "A trailer line is malformed." }
        guard line[(colon + 1)...].allSatisfy(isFieldByte) else {
            return "A trailer value contains a control character."
        }
        return nil
    }

    /// A byte allowed in a field value or extension: tab, visible ASCII, space, or obs-text.
    static func isFieldByte(_ byte: UInt8) -> Bool {
        byte == 9 || (byte >= 0x20 && byte != 0x7F)
    }
}
