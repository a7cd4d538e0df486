@_exported import RoostErrorCodes

/// An HTTP request method.
public struct HTTPMethod: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    public static let get = HTTPMethod(rawValue: "GET")
    public static let head = HTTPMethod(rawValue: "HEAD")
    public static let post = HTTPMethod(rawValue: "POST")
    public static let put = HTTPMethod(rawValue: "PUT")
    public static let patch = HTTPMethod(rawValue: "PATCH")
    public static let delete = HTTPMethod(rawValue: "DELETE")
    public static let options = HTTPMethod(rawValue: "OPTIONS")

    public var description: String { rawValue }
}

/// A complete HTTP request as a handler sees it.
public struct Request: Sendable {
    /// The request method.
    public var method: HTTPMethod
    /// The request target exactly as received, path and query.
    public var target: String
    /// The path part of the target, still percent-encoded.
    public var path: Substring
    /// The query string after `?`, without the `?`, still percent-encoded.
    public var query: Substring?
    /// The header fields.
    public var headers: HTTPHeaders
    /// The body bytes; empty when there was none, or when it was streamed to a file.
    public var body: [UInt8]
    /// The body, when its route streams bodies to disk (``RequestLimits/streamedBodyLimit``).
    public var streamedBody: StreamedBody?
    /// The client's address, for logs and rate limits: the socket peer, or the client a trusted
    /// proxy names (see ``TrustedProxies``).
    public var remoteAddress: String
    /// The socket peer's address, whoever the request says it comes from.
    public var peerAddress: String
    /// `https` when a trusted proxy says the client used it; `http` otherwise (the TLS layer sets
    /// it for its own connections).
    public var scheme = "http"
    /// The id of this request in logs and in the `X-Request-Id` answer header; empty until the
    /// application assigns one.
    public var requestID = ""
    /// Path parameters filled in by the router.
    public var parameters: RouteParameters = [:]
    /// The route the router chose, found when the head arrived (see ``Router/route(_:)``).
    public var routeMatch: RouteMatch?
    /// The route pattern that matched, for metrics.
    public var route: String?
    /// The server's budget of held bytes, against which a handler reserves what it builds from
    /// the body; nil for requests made outside a server.
    public var heldBytes: HeldBytes?
    /// Made by a middleware on the server's behalf (the FatFractal dialect's grab bags), never
    /// received: no client can set it.
    public var isMadeByServer = false

    /// Makes a request; the target is split into path and query.
    public init(
        method: HTTPMethod, target: String, headers: HTTPHeaders = HTTPHeaders(), body: [UInt8] = [],
        remoteAddress: String = "-"
    ) {
        self.method = method
        self.target = target
        self.headers = headers
        self.body = body
        self.remoteAddress = remoteAddress
        peerAddress = remoteAddress
        if let mark = target.firstIndex(of: "?") {
            path = target[..<mark]
            query = target[target.index(after: mark)...]
        } else {
            path = target[...]
            query = nil
        }
    }

    /// Takes the client address and scheme from the forwarding headers when the peer is one of
    /// `proxies`; otherwise (the default, with no trusted proxies) leaves them as the socket says.
    public mutating func believeForwardingHeaders(from proxies: TrustedProxies) {
        guard !proxies.isEmpty, let forwarded = proxies.forwardedClient(peer: peerAddress, headers: headers)
        else { return }
        remoteAddress = forwarded.address
        if let scheme = forwarded.scheme { self.scheme = scheme }
    }

    /// The decoded value of the first query parameter with this name.
    public func queryParameter(_ name: String) -> String? {
        guard let query else { return nil }
        for pair in query.split(separator: "&", omittingEmptySubsequences: true) {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            if PercentEncoding.decode(parts[0], plusAsSpace: true) == name {
                return parts.count > 1 ? PercentEncoding.decode(parts[1], plusAsSpace: true) ?? "" : ""
            }
        }
        return nil
    }
}

/// Percent-decoding for paths and query strings.
public enum PercentEncoding {
    /// Decodes `%XX` escapes; nil when an escape is malformed or the result is not UTF-8.
    public static func decode<S: StringProtocol>(_ text: S, plusAsSpace: Bool = false) -> String? {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count)
        var iterator = text.utf8.makeIterator()
        while let byte = iterator.next() {
            if byte == UInt8(ascii: "%") {
                guard let high = iterator.next().flatMap(hexValue),
                    let low = iterator.next().flatMap(hexValue)
                else { return nil }
                bytes.append(high << 4 | low)
            } else if plusAsSpace && byte == UInt8(ascii: "+") {
                bytes.append(UInt8(ascii: " "))
            } else {
                bytes.append(byte)
            }
        }
        return String(validating: bytes, as: UTF8.self)
    }

    static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
