// The request line and header fields: what may be sent, and how the body is framed.

/// How a request's body is delimited.
enum Framing: Equatable {
    case none
    case length(Int)
    case chunked
}

extension RequestParser {
    static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        default:
            return "!#$%&'*+-.^_`|~".utf8.contains(byte)
        }
    }

    func parseHead(_ bytes: ArraySlice<UInt8>) -> Result<(RequestHead, Framing), HTTPProtocolError> {
        func bad(_ message: String) -> Result<(RequestHead, Framing), HTTPProtocolError> {
            .failure(Self.invalid(message))
        }
        var lines = bytes.split(separator: 10, omittingEmptySubsequences: false).map { line in
            line.last == 13 ? line.dropLast() : line
        }
        // A few empty lines before the request line are allowed (RFC 9112 section 2.2).
        while let first = lines.first, first.isEmpty { lines.removeFirst() }
        guard let requestLine = lines.first else { return bad("The request line is missing.") }
        let parts = requestLine.split(separator: UInt8(ascii: " "), omittingEmptySubsequences: false)
        guard parts.count == 3, !parts[0].isEmpty, parts[0].allSatisfy(Self.isTokenByte), !parts[1].isEmpty
        else {
            return bad("The request line must be 'METHOD /path HTTP/1.1'.")
        }
        let version = String(decoding: parts[2], as: UTF8.self)
        let minor: Int
        switch version {
        case "HTTP/1.1": minor = 1
        case "HTTP/1.0": minor = 0
        default:
            return .failure(
                HTTPProtocolError(
                    status: 505, code: "http_version_not_supported",
                    message: "Only HTTP/1.0 and HTTP/1.1 are supported."))
        }
        guard
            parts[1].first == UInt8(ascii: "/")
                || (parts[1].count == 1 && parts[1].first == UInt8(ascii: "*")),
            parts[1].allSatisfy({ $0 > 0x20 && $0 < 0x7F })
        else { return bad("The request target must be a path starting with '/'.") }

        var fields: [HTTPHeaderField] = []
        for line in lines.dropFirst() {
            guard let first = line.first else { continue }
            if first == UInt8(ascii: " ") || first == UInt8(ascii: "\t") {
                return bad("Folded header lines are not allowed.")
            }
            guard let colon = line.firstIndex(of: UInt8(ascii: ":")), colon > line.startIndex,
                line[line.startIndex..<colon].allSatisfy(Self.isTokenByte)
            else { return bad("A header line is malformed.") }
            let rawValue = line[(colon + 1)...]
            guard rawValue.allSatisfy({ $0 == 9 || ($0 >= 0x20 && $0 != 0x7F) }) else {
                return bad("A header value contains a control character.")
            }
            let trimmed = rawValue.drop(while: { $0 == 32 || $0 == 9 }).reversed().drop(while: {
                $0 == 32 || $0 == 9
            })
            fields.append(
                HTTPHeaderField(
                    name: String(decoding: line[line.startIndex..<colon], as: UTF8.self),
                    value: String(decoding: trimmed.reversed(), as: UTF8.self)))
            if fields.count > limits.maxHeaderCount {
                return .failure(
                    HTTPProtocolError(
                        status: 431, code: "headers_too_large",
                        message: "The request has more than \(limits.maxHeaderCount) header fields."))
            }
        }

        var framing = Framing.none
        var connectionTokens: [Substring] = []
        var hasHost = false
        for field in fields {
            if field.name.caseInsensitiveEquals("content-length") {
                guard !field.value.isEmpty, field.value.utf8.count <= 15,
                    field.value.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }),
                    let length = Int(field.value)
                else { return bad("Content-Length must be a decimal number.") }
                switch framing {
                case .none: framing = .length(length)
                case .length(let previous) where previous == length: break
                default: return bad("The request has conflicting body lengths.")
                }
            } else if field.name.caseInsensitiveEquals("transfer-encoding") {
                guard field.value.caseInsensitiveEquals("chunked") else {
                    return .failure(
                        HTTPProtocolError(
                            status: 501, code: "not_implemented",
                            message: "Only the 'chunked' transfer coding is supported."))
                }
                if framing == .chunked { return bad("Transfer-Encoding is repeated.") }
                // RFC 9112 section 6.1: an HTTP/1.0 message with Transfer-Encoding has faulty framing.
                if minor == 0 { return bad("HTTP/1.0 requests may not use Transfer-Encoding.") }
                framing = .chunked
            } else if field.name.caseInsensitiveEquals("connection") {
                connectionTokens += field.value.split(separator: ",").map { $0.trimmingSpaces() }
            } else if field.name.caseInsensitiveEquals("host") {
                hasHost = true
            }
        }
        let lengthCount = fields.filter { $0.name.caseInsensitiveEquals("content-length") }.count
        if framing == .chunked && lengthCount > 0 {
            return bad("A request may not carry both Content-Length and Transfer-Encoding.")
        }
        if minor == 1 && !hasHost { return bad("HTTP/1.1 requests must carry a Host header.") }
        let keepAlive: Bool
        if minor == 1 {
            keepAlive = !connectionTokens.contains { String($0).caseInsensitiveEquals("close") }
        } else {
            keepAlive = connectionTokens.contains { String($0).caseInsensitiveEquals("keep-alive") }
        }
        let head = RequestHead(
            method: String(decoding: parts[0], as: UTF8.self),
            target: String(decoding: parts[1], as: UTF8.self),
            minorVersion: minor, headers: fields, keepAlive: keepAlive)
        return .success((head, framing))
    }
}

extension Substring {
    func trimmingSpaces() -> Substring {
        var result = self
        while result.first == " " || result.first == "\t" { result.removeFirst() }
        while result.last == " " || result.last == "\t" { result.removeLast() }
        return result
    }
}
