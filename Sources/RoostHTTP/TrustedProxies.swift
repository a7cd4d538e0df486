import Glibc

/// An IP address as 16 bytes (IPv4 as its IPv4-mapped IPv6 form), so both families compare alike.
public struct IPAddress: Sendable, Equatable {
    var bytes: (UInt64, UInt64)
    /// Whether it was written as IPv4 (or IPv4-mapped IPv6).
    public let isIPv4: Bool

    /// Parses `192.0.2.1` or `2001:db8::1` (no brackets, no port, no zone); nil otherwise.
    public init?<S: StringProtocol>(_ text: S) {
        // The longest IPv6 text is 45 bytes; anything longer is not an address.
        guard !text.isEmpty, text.utf8.count <= 45 else { return nil }
        var raw = in6_addr()
        let string = String(text)
        if string.utf8.contains(UInt8(ascii: ":")) {
            guard inet_pton(AF_INET6, string, &raw) == 1 else { return nil }
        } else {
            var v4 = in_addr()
            guard inet_pton(AF_INET, string, &v4) == 1 else { return nil }
            withUnsafeMutableBytes(of: &raw) { bytes in
                bytes[10] = 0xff
                bytes[11] = 0xff
                withUnsafeBytes(of: v4) {
                    bytes.baseAddress!.advanced(by: 12).copyMemory(from: $0.baseAddress!, byteCount: 4)
                }
            }
        }
        let words = withUnsafeBytes(of: raw) { bytes in
            (
                UInt64(bigEndian: bytes.loadUnaligned(as: UInt64.self)),
                UInt64(bigEndian: bytes.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
            )
        }
        bytes = words
        isIPv4 = words.0 == 0 && words.1 >> 32 == 0xffff
    }

    public static func == (lhs: IPAddress, rhs: IPAddress) -> Bool { lhs.bytes == rhs.bytes }

    /// The canonical text: dotted IPv4 for IPv4 and IPv4-mapped addresses, RFC 5952 IPv6 otherwise,
    /// so that one client never counts as two differently written addresses.
    public var text: String {
        var raw = in6_addr()
        withUnsafeMutableBytes(of: &raw) { bytes in
            bytes.storeBytes(of: self.bytes.0.bigEndian, toByteOffset: 0, as: UInt64.self)
            bytes.storeBytes(of: self.bytes.1.bigEndian, toByteOffset: 8, as: UInt64.self)
        }
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        if isIPv4 {
            var v4 = in_addr(s_addr: UInt32(truncatingIfNeeded: bytes.1).bigEndian)
            inet_ntop(AF_INET, &v4, &buffer, socklen_t(buffer.count))
        } else {
            inet_ntop(AF_INET6, &raw, &buffer, socklen_t(buffer.count))
        }
        return String(
            decoding: buffer.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// Why a `--trusted-proxies` list was refused.
public struct TrustedProxiesError: Error, Sendable, Equatable, CustomStringConvertible {
    public let message: String
    public var description: String { message }
    public init(message: String) { self.message = message }
}

/// Which forwarding header the operator's proxy writes (`--proxy-header`): the only one believed.
///
/// Proxies pass the headers they do not write through untouched (nginx and Caddy pass a client's
/// own `Forwarded`), so believing a header the proxy does not write lets every client choose its
/// address.
public enum ForwardingHeader: String, Sendable, CaseIterable {
    /// `X-Forwarded-For` and `X-Forwarded-Proto`, as nginx (`$proxy_add_x_forwarded_for`), Caddy,
    /// HAProxy (`option forwardfor`) and most load balancers write them. The default.
    case xForwardedFor = "x-forwarded-for"
    /// RFC 7239 `Forwarded`, for proxies set to write it (HAProxy's `option forwarded`, or nginx
    /// told to); `X-Forwarded-*` are then ignored.
    case forwarded
}

/// The reverse proxies whose forwarding headers are believed (`--trusted-proxies`): a list of
/// IPv4 and IPv6 CIDR ranges. Empty (the default) believes no forwarding header at all.
public struct TrustedProxies: Sendable {
    struct Range: Sendable {
        let network: IPAddress
        /// Prefix length counted in the 128-bit form (an IPv4 /24 is /120).
        let prefix: Int
    }
    let ranges: [Range]
    /// The one header family believed from those proxies.
    public var header: ForwardingHeader = .xForwardedFor

    /// The most ranges a list may hold; a longer list is surely a mistake.
    public static let maximumRanges = 256

    /// Trusts nobody.
    public init() { ranges = [] }

    /// Parses `10.0.0.0/8,192.0.2.1,2001:db8::/32`; an address without a prefix is one host.
    public init(_ list: String, header: ForwardingHeader = .xForwardedFor) throws(TrustedProxiesError) {
        self.header = header
        var ranges: [Range] = []
        for item in list.split(separator: ",") {
            let text = item.trimmingSpaces()
            if text.isEmpty { continue }
            ranges.append(try Self.range(text))
        }
        guard ranges.count <= Self.maximumRanges else {
            throw TrustedProxiesError(
                message: "--trusted-proxies takes at most \(Self.maximumRanges) ranges, not \(ranges.count)")
        }
        self.ranges = ranges
    }

    /// Whether no proxy is trusted, so forwarding headers are never looked at.
    public var isEmpty: Bool { ranges.isEmpty }

    private static func range(_ text: Substring) throws(TrustedProxiesError) -> Range {
        let parts = text.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard let network = IPAddress(parts[0]) else {
            throw TrustedProxiesError(
                message:
                    "--trusted-proxies: '\(text)' is not an IP address or CIDR range such as 10.0.0.0/8 or fd00::/8"
            )
        }
        let maximum = network.isIPv4 ? 32 : 128
        var prefix = maximum
        if parts.count == 2 {
            guard parts[1].utf8.count <= 3, let value = Int(parts[1]), (0...maximum).contains(value) else {
                throw TrustedProxiesError(
                    message:
                        "--trusted-proxies: '\(text)' has a bad prefix length; an \(network.isIPv4 ? "IPv4" : "IPv6") range takes 0 to \(maximum)"
                )
            }
            prefix = value
        }
        let bits = network.isIPv4 ? prefix + 96 : prefix
        guard masked(network, bits) == network else {
            throw TrustedProxiesError(
                message:
                    "--trusted-proxies: '\(text)' has bits set past its prefix; write the network address, e.g. \(masked(network, bits).text)/\(prefix)"
            )
        }
        return Range(network: network, prefix: bits)
    }

    private static func masked(_ address: IPAddress, _ bits: Int) -> IPAddress {
        var result = address
        let high: UInt64 = bits >= 64 ? ~0 : (bits == 0 ? 0 : ~0 << (64 - bits))
        let low: UInt64 = bits <= 64 ? 0 : (bits >= 128 ? ~0 : ~0 << (128 - bits))
        result.bytes = (address.bytes.0 & high, address.bytes.1 & low)
        return result
    }

    /// Whether the address lies in one of the ranges.
    public func contains(_ address: IPAddress) -> Bool {
        ranges.contains { Self.masked(address, $0.prefix) == $0.network }
    }

    /// Whether the address text (a socket peer, say) lies in one of the ranges.
    public func contains(_ text: String) -> Bool {
        guard !ranges.isEmpty, let address = IPAddress(text) else { return false }
        return contains(address)
    }

    /// The client a request comes from and the scheme it used, as the forwarding headers tell when
    /// the peer is a trusted proxy; nil when they are not to be believed (or say nothing usable).
    ///
    /// Only ``header`` is read: `X-Forwarded-For` (with `X-Forwarded-Proto`) or RFC 7239
    /// `Forwarded`, never both, since a proxy passes the one it does not write through from the
    /// client. It is walked from the right, skipping trusted proxies: the first address that is not
    /// one is the client (a client can put anything on the left, never on the right of what a
    /// trusted proxy appended). A header that does not parse is ignored whole.
    public func forwardedClient(peer: String, headers: HTTPHeaders) -> (address: String, scheme: String?)? {
        guard !ranges.isEmpty, contains(peer) else { return nil }
        var forwarded: [String] = []
        var forwardedFor: [String] = []
        var forwardedProto: [String] = []
        for field in headers {
            switch header {
            case .forwarded:
                if field.name.caseInsensitiveEquals("Forwarded") { forwarded.append(field.value) }
            case .xForwardedFor:
                if field.name.caseInsensitiveEquals("X-Forwarded-For") {
                    forwardedFor.append(field.value)
                } else if field.name.caseInsensitiveEquals("X-Forwarded-Proto") {
                    forwardedProto.append(field.value)
                }
            }
        }
        if header == .forwarded {
            guard !forwarded.isEmpty else { return nil }
            // Element by element from the right: what a client wrote on the left, however
            // malformed, cannot spoil what the proxies appended.
            let elements = ForwardedHeader.elements(forwarded.joined(separator: ","))
            var hops: [(address: IPAddress?, scheme: String?)] = []
            for element in elements.reversed() {
                // A malformed element counts as an `unknown` hop, and the walk stops there.
                guard let parsed = ForwardedHeader.parse(String(element)), parsed.count == 1 else {
                    hops.insert((nil, nil), at: 0)
                    break
                }
                hops.insert(parsed[0], at: 0)
                if let address = parsed[0].address, !contains(address) { break }
            }
            guard let chosen = walk(hops.map(\.address)) else { return nil }
            return (chosen.address, hops[chosen.index].scheme)
        }
        if !forwardedFor.isEmpty, let chosen = walkForwardedFor(forwardedFor.joined(separator: ",")) {
            return (chosen, ForwardedHeader.scheme(forwardedProto.last?.split(separator: ",").last))
        }
        if let scheme = ForwardedHeader.scheme(forwardedProto.last?.split(separator: ",").last) {
            return (IPAddress(peer)?.text ?? peer, scheme)
        }
        return nil
    }

    /// From the right, as far as the walk needs: an item that does not parse counts as `unknown`,
    /// so junk a client put on the left never hides the address a proxy appended after it.
    private func walkForwardedFor(_ value: String) -> String? {
        var addresses: [IPAddress?] = []
        for item in value.split(separator: ",", omittingEmptySubsequences: false).reversed() {
            guard let node = ForwardedHeader.node(item.trimmingSpaces(), quoted: false) else {
                addresses.insert(nil, at: 0)
                break
            }
            addresses.insert(node.address, at: 0)
            if let address = node.address, !contains(address) { break }
        }
        return walk(addresses)?.address
    }

    /// The right-most hop that is not a trusted proxy; `unknown` hops stop the walk at the proxy
    /// that wrote them. Nil when the list is empty.
    private func walk(_ hops: [IPAddress?]) -> (address: String, index: Int)? {
        guard !hops.isEmpty else { return nil }
        var index = hops.count - 1
        while true {
            guard let address = hops[index] else {
                // An `unknown` or obfuscated node: the client is not known past the proxy before it.
                return index + 1 < hops.count ? (hops[index + 1]!.text, index + 1) : nil
            }
            if !contains(address) || index == 0 { return (address.text, index) }
            index -= 1
        }
    }
}
