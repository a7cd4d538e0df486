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

    /// A parsed head, how its body is framed, and whether it asks for `100 Continue`.
    typealias ParsedHead = (head: RequestHead, framing: Framing, expectsContinue: Bool)

    /// Parses a head that ``findHeadEnd()`` delimited (so every LF in it follows a CR), in one
    /// pass of index loops: no intermediate arrays of lines.
    func parseHead(_ bytes: ArraySlice<UInt8>) -> Result<ParsedHead, HTTPProtocolError> {
        func bad(_ message: String) -> Result<ParsedHead, HTTPProtocolError> {
            .failure(Self.invalid(message))
        }
        let end = bytes.endIndex
        /// The end of the line starting at `start`: the index of its CR, or `end` for the last line.
        func lineEnd(from start: Int) -> Int {
            var index = start
            while index < end {
                if bytes[index] == 10 { return index - 1 }
                index += 1
            }
            return end
        }
        var index = bytes.startIndex
        // A few empty lines before the request line are allowed (RFC 9112 section 2.2).
        while index + 1 < end && bytes[index] == 13 && bytes[index + 1] == 10 { index += 2 }
        guard index < end else { return bad("The request line is missing.") }
        let requestEnd = lineEnd(from: index)
        // Exactly two single spaces: METHOD SP target SP version.
        var firstSpace = -1
        var secondSpace = -1
        var extraSpace = false
        for position in index..<requestEnd where bytes[position] == UInt8(ascii: " ") {
            if firstSpace < 0 {
                firstSpace = position
            } else if secondSpace < 0 {
                secondSpace = position
            } else {
                extraSpace = true
                break
            }
        }
        guard !extraSpace, firstSpace > index, secondSpace > firstSpace + 1,
            bytes[index..<firstSpace].allSatisfy(Self.isTokenByte)
        else { return bad("The request line must be 'METHOD /path HTTP/1.1'.") }
        let method = bytes[index..<firstSpace]
        let target = bytes[(firstSpace + 1)..<secondSpace]
        let version = bytes[(secondSpace + 1)..<requestEnd]
        let minor: Int
        if version.elementsEqual("HTTP/1.1".utf8) {
            minor = 1
        } else if version.elementsEqual("HTTP/1.0".utf8) {
            minor = 0
        } else {
            return .failure(
                HTTPProtocolError(
                    status: 505, code: .httpVersionNotSupported,
                    message: "Only HTTP/1.0 and HTTP/1.1 are supported."))
        }
        guard
            target.first == UInt8(ascii: "/") || (target.count == 1 && target.first == UInt8(ascii: "*")),
            target.allSatisfy({ $0 > 0x20 && $0 < 0x7F })
        else { return bad("The request target must be a path starting with '/'.") }

        var fields: [HTTPHeaderField] = []
        var framing = Framing.none
        var lengthCount = 0
        var hasHost = false
        var expectsContinue = false
        var closeRequested = false
        var keepAliveRequested = false
        index = requestEnd + 2
        while index < end {
            let lineStop = lineEnd(from: index)
            defer { index = lineStop + 2 }
            if lineStop == index { continue }
            if bytes[index] == UInt8(ascii: " ") || bytes[index] == UInt8(ascii: "\t") {
                return bad("Folded header lines are not allowed.")
            }
            var colon = index
            while colon < lineStop && bytes[colon] != UInt8(ascii: ":") {
                guard Self.isTokenByte(bytes[colon]) else { return bad("A header line is malformed.") }
                colon += 1
            }
            guard colon < lineStop, colon > index else { return bad("A header line is malformed.") }
            var valueStart = colon + 1
            var valueEnd = lineStop
            guard bytes[valueStart..<valueEnd].allSatisfy(Self.isFieldByte) else {
                return bad("A header value contains a control character.")
            }
            while valueStart < valueEnd && (bytes[valueStart] == 32 || bytes[valueStart] == 9) {
                valueStart += 1
            }
            while valueEnd > valueStart && (bytes[valueEnd - 1] == 32 || bytes[valueEnd - 1] == 9) {
                valueEnd -= 1
            }
            let name = bytes[index..<colon]
            let value = bytes[valueStart..<valueEnd]
            fields.append(
                HTTPHeaderField(
                    name: String(decoding: name, as: UTF8.self), value: String(decoding: value, as: UTF8.self)
                ))
            if fields.count > limits.maxHeaderCount {
                return .failure(
                    HTTPProtocolError(
                        status: 431, code: .headersTooLarge,
                        message: "The request has more than \(limits.maxHeaderCount) header fields."))
            }
            if Self.equalsIgnoringCase(name, "content-length") {
                lengthCount += 1
                guard !value.isEmpty, value.count <= 15, value.allSatisfy({ $0 >= 48 && $0 <= 57 }) else {
                    return bad("Content-Length must be a decimal number.")
                }
                let length = value.reduce(0) { $0 * 10 + Int($1 - 48) }
                switch framing {
                case .none: framing = .length(length)
                case .length(let previous) where previous == length: break
                default: return bad("The request has conflicting body lengths.")
                }
            } else if Self.equalsIgnoringCase(name, "transfer-encoding") {
                guard Self.equalsIgnoringCase(value, "chunked") else {
                    return .failure(
                        HTTPProtocolError(
                            status: 501, code: .notImplemented,
                            message: "Only the 'chunked' transfer coding is supported."))
                }
                if framing == .chunked { return bad("Transfer-Encoding is repeated.") }
                // RFC 9112 section 6.1: an HTTP/1.0 message with Transfer-Encoding has faulty framing.
                if minor == 0 { return bad("HTTP/1.0 requests may not use Transfer-Encoding.") }
                framing = .chunked
            } else if Self.equalsIgnoringCase(name, "connection") {
                for token in fields[fields.count - 1].value.split(separator: ",") {
                    let trimmed = token.trimmingSpaces()
                    if String(trimmed).caseInsensitiveEquals("close") { closeRequested = true }
                    if String(trimmed).caseInsensitiveEquals("keep-alive") { keepAliveRequested = true }
                }
            } else if Self.equalsIgnoringCase(name, "host") {
                // RFC 9112 section 3.2: one Host, and a valid one. A comma is a list, which is
                // what a proxy makes of two Hosts: each hop would pick a different one.
                if hasHost { return .failure(Self.invalidHost("The request has more than one Host header.")) }
                guard Self.isValidHost(value) else {
                    return .failure(
                        Self.invalidHost(
                            "The Host header must be a host name or address, with an optional port."))
                }
                hasHost = true
            } else if Self.equalsIgnoringCase(name, "expect") {
                // RFC 9110 section 10.1.1: 100-continue is the only expectation there is.
                for member in fields[fields.count - 1].value.split(separator: ",") {
                    let trimmed = member.trimmingSpaces()
                    if trimmed.isEmpty { continue }
                    guard String(trimmed).caseInsensitiveEquals("100-continue") else {
                        return .failure(
                            HTTPProtocolError(
                                status: 417, code: .expectationFailed,
                                message: "The only expectation supported is 'Expect: 100-continue'."))
                    }
                    // An HTTP/1.0 client may not understand an interim answer: it is not sent one.
                    expectsContinue = minor == 1
                }
            }
        }
        if framing == .chunked && lengthCount > 0 {
            return bad("A request may not carry both Content-Length and Transfer-Encoding.")
        }
        if minor == 1 && !hasHost { return bad("HTTP/1.1 requests must carry a Host header.") }
        let head = RequestHead(
            method: String(decoding: method, as: UTF8.self),
            target: String(decoding: target, as: UTF8.self),
            minorVersion: minor, headers: fields, keepAlive: minor == 1 ? !closeRequested : keepAliveRequested
        )
        return .success((head, framing, expectsContinue))
    }

    static func invalidHost(_ message: String) -> HTTPProtocolError {
        HTTPProtocolError(status: 400, code: .invalidHost, message: message)
    }

    /// Whether a Host value is `uri-host [":" port]` (RFC 3986): a bracketed IPv6 literal or a
    /// non-empty reg-name (which covers IPv4 and DNS names) without a comma (see the Host check
    /// above), then at most a colon and up to five digits.
    static func isValidHost(_ value: ArraySlice<UInt8>) -> Bool {
        let colon = UInt8(ascii: ":")
        let hostEnd: Int
        if value.first == UInt8(ascii: "[") {
            guard let close = value.firstIndex(of: UInt8(ascii: "]")), close > value.startIndex + 1,
                value[(value.startIndex + 1)..<close].allSatisfy({
                    PercentEncoding.hexValue($0) != nil || $0 == colon || $0 == UInt8(ascii: ".")
                })
            else { return false }
            hostEnd = close + 1
        } else {
            hostEnd = value.firstIndex(of: colon) ?? value.endIndex
            guard hostEnd > value.startIndex, value[..<hostEnd].allSatisfy(isRegNameByte) else {
                return false
            }
        }
        let port = value[hostEnd...]
        return port.isEmpty
            || (port.first == colon && port.count <= 6
                && port.dropFirst().allSatisfy { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") })
    }

    /// unreserved, pct-encoded's `%` and sub-delims, less the comma.
    private static func isRegNameByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        default:
            return "-._~%!$&'()*+;=".utf8.contains(byte)
        }
    }

    /// ASCII case-insensitive comparison of received bytes with a lower-case name.
    static func equalsIgnoringCase(_ bytes: ArraySlice<UInt8>, _ lowercase: StaticString) -> Bool {
        guard bytes.count == lowercase.utf8CodeUnitCount else { return false }
        var expected = lowercase.utf8Start
        for byte in bytes {
            let lower = byte >= 65 && byte <= 90 ? byte | 0x20 : byte
            if lower != expected.pointee { return false }
            expected += 1
        }
        return true
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
