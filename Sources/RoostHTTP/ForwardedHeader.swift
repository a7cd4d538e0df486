/// RFC 7239 `Forwarded` and the node syntax `X-Forwarded-For` shares with it.
enum ForwardedHeader {
    /// One hop's `for=` node: an address, or `unknown` / an obfuscated identifier.
    enum Node {
        case address(IPAddress)
        case unknown

        var address: IPAddress? {
            if case .address(let address) = self { return address }
            return nil
        }
    }

    /// The elements of a `Forwarded` value, left to right: each one's `for` address (nil when
    /// unknown, obfuscated or absent) and `proto`. Nil when anything fails to parse, so a
    /// malformed header is ignored whole.
    static func parse(_ value: String) -> [(address: IPAddress?, scheme: String?)]? {
        var elements: [(address: IPAddress?, scheme: String?)] = []
        var current: (address: IPAddress?, scheme: String?) = (nil, nil)
        var seen: Set<String> = []
        var bytes = Substring(value).utf8[...]
        func skipSpaces() {
            while let first = bytes.first, first == UInt8(ascii: " ") || first == UInt8(ascii: "\t") {
                bytes.removeFirst()
            }
        }
        while true {
            skipSpaces()
            // forwarded-pair = token "=" value
            let name = bytes.prefix(while: isTokenByte)
            guard !name.isEmpty, name.count < bytes.count, bytes[name.endIndex] == UInt8(ascii: "=") else {
                return nil
            }
            bytes = bytes[bytes.index(after: name.endIndex)...]
            let pairValue: String
            var quoted = false
            if bytes.first == UInt8(ascii: "\"") {
                quoted = true
                bytes.removeFirst()
                var text: [UInt8] = []
                var closed = false
                while let byte = bytes.popFirst() {
                    if byte == UInt8(ascii: "\"") {
                        closed = true
                        break
                    }
                    if byte == UInt8(ascii: "\\") {
                        guard let escaped = bytes.popFirst() else { return nil }
                        text.append(escaped)
                    } else {
                        guard byte == UInt8(ascii: "\t") || (0x20...0x7e).contains(byte) else { return nil }
                        text.append(byte)
                    }
                }
                guard closed else { return nil }
                pairValue = String(decoding: text, as: UTF8.self)
            } else {
                let token = bytes.prefix(while: isTokenByte)
                guard !token.isEmpty else { return nil }
                pairValue = String(Substring(token))
                bytes = bytes[token.endIndex...]
            }
            let key = String(Substring(name)).lowercased()
            // A parameter named twice in one element is malformed (RFC 7239, section 4).
            guard seen.insert(key).inserted else { return nil }
            switch key {
            case "for":
                guard let node = node(Substring(pairValue), quoted: quoted) else { return nil }
                current.address = node.address
            case "proto":
                guard let scheme = scheme(Substring(pairValue)) else { return nil }
                current.scheme = scheme
            default:
                break
            }
            skipSpaces()
            guard let separator = bytes.popFirst() else {
                elements.append(current)
                return elements
            }
            if separator == UInt8(ascii: ",") {
                elements.append(current)
                current = (nil, nil)
                seen = []
            } else if separator != UInt8(ascii: ";") {
                return nil
            }
        }
    }

    /// A `Forwarded` value cut into its elements at the commas outside quoted strings, each left
    /// as written (to be parsed on its own with ``parse(_:)``).
    static func elements(_ value: String) -> [Substring] {
        var elements: [Substring] = []
        var start = value.startIndex
        var quoted = false
        var escaped = false
        for index in value.indices {
            let character = value[index]
            if escaped {
                escaped = false
            } else if quoted && character == "\\" {
                escaped = true
            } else if character == "\"" {
                quoted.toggle()
            } else if character == ",", !quoted {
                elements.append(value[start..<index])
                start = value.index(after: index)
            }
        }
        elements.append(value[start...])
        return elements
    }

    /// `192.0.2.1`, `192.0.2.1:8080`, `[2001:db8::1]`, `[2001:db8::1]:8080`, `unknown` or an
    /// obfuscated `_name`; a bare IPv6 address only outside `Forwarded`'s quoted strings (as
    /// `X-Forwarded-For` writes it). Nil when it is none of these.
    static func node(_ text: Substring, quoted: Bool) -> Node? {
        if text.lowercased() == "unknown" { return .unknown }
        if text.first == "_" {
            return text.utf8.allSatisfy { isTokenByte($0) } ? .unknown : nil
        }
        if text.first == "[" {
            guard let close = text.firstIndex(of: "]"),
                let address = IPAddress(text[text.index(after: text.startIndex)..<close]),
                !address.isIPv4
            else { return nil }
            let rest = text[text.index(after: close)...]
            guard rest.isEmpty || (rest.first == ":" && isPort(rest.dropFirst())) else { return nil }
            return .address(address)
        }
        let colons = text.utf8.count(where: { $0 == UInt8(ascii: ":") })
        if colons > 1 {
            // A bare IPv6 address is not a valid Forwarded node, but X-Forwarded-For writes them so.
            guard !quoted, let address = IPAddress(text), !address.isIPv4 else { return nil }
            return .address(address)
        }
        let host = colons == 1 ? text[..<text.firstIndex(of: ":")!] : text
        if colons == 1 {
            guard isPort(text[text.index(after: host.endIndex)...]) else { return nil }
        }
        guard let address = IPAddress(host), address.isIPv4 else { return nil }
        return .address(address)
    }

    /// `http` or `https`, lower-cased; nil for anything else.
    static func scheme(_ text: Substring?) -> String? {
        guard let text = text?.trimmingSpaces() else { return nil }
        if text.caseInsensitiveEquals("https") { return "https" }
        if text.caseInsensitiveEquals("http") { return "http" }
        return nil
    }

    private static func isPort(_ text: Substring) -> Bool {
        // RFC 7239 also allows an obfuscated port (`_abc`).
        if text.first == "_" { return text.count > 1 && text.utf8.allSatisfy { isTokenByte($0) } }
        guard (1...5).contains(text.utf8.count), text.utf8.allSatisfy({ (48...57).contains($0) }),
            let port = Int(text)
        else { return false }
        return port <= 65535
    }

    /// RFC 9110's tchar.
    static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        default:
            "!#$%&'*+-.^_`|~".utf8.contains(byte)
        }
    }
}

extension Substring {
    func caseInsensitiveEquals(_ other: String) -> Bool { String(self).caseInsensitiveEquals(other) }
}
