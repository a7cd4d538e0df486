/// The plain-HTTP listener's one answer: `308 Permanent Redirect` to the same host and target
/// over HTTPS (308 keeps the method and body, unlike 301), and `Connection: close`.
///
/// The host comes from the request's `Host` header and nowhere else, and must be a plain host name or IP address, so the answer can only send a client to
/// the host it asked for: never to another one, and never with injected userinfo, paths or
/// header lines.
public struct HTTPSRedirect: Responder {
    /// The HTTPS port, read per request since it is known only once the TLS server listens.
    let httpsPort: @Sendable () -> Int
    let errorBody: @Sendable (HTTPProtocolError) -> Response

    public init(
        httpsPort: @escaping @Sendable () -> Int,
        errorBody: @escaping @Sendable (HTTPProtocolError) -> Response = HTTPServer.defaultErrorBody
    ) {
        self.httpsPort = httpsPort
        self.errorBody = errorBody
    }

    static let invalidHost = HTTPProtocolError(
        status: 400, code: .invalidHost,
        message: "This port only redirects to HTTPS, which needs a valid Host header; use https:// instead.")

    public func respond(to request: Request) async -> Response {
        let hosts = request.headers.values(for: "Host")
        var response: Response
        if hosts.count == 1, let host = Self.hostName(hosts[0]) {
            let port = httpsPort()
            let authority = port == 443 ? host : "\(host):\(port)"
            response = Response(status: 308)
            response.headers.set("Location", "https://\(authority)\(Self.path(of: request.target))")
        } else {
            response = errorBody(Self.invalidHost)
        }
        response.headers.set("Connection", "close")
        response.route = "https redirect"
        return response
    }

    /// The host part of a `Host` value without its port, or nil unless it is a DNS name, an IPv4
    /// address or a bracketed IPv6 address.
    static func hostName(_ value: String) -> String? {
        let value = Substring(value)
        let host: Substring
        let port: Substring?
        if value.hasPrefix("[") {
            guard let close = value.firstIndex(of: "]") else { return nil }
            host = value[...close]
            let rest = value[value.index(after: close)...]
            guard rest.isEmpty || rest.hasPrefix(":") else { return nil }
            port = rest.isEmpty ? nil : rest.dropFirst()
            let inside = host.dropFirst().dropLast()
            guard !inside.isEmpty, inside.allSatisfy({ $0.isHexDigit || $0 == ":" || $0 == "." }) else {
                return nil
            }
        } else {
            let parts = value.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
            host = parts[0]
            port = parts.count > 1 ? parts[1] : nil
            guard !host.isEmpty, host.utf8.count <= 253,
                host.utf8.allSatisfy({ byte in
                    (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z"))
                        || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
                        || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"))
                        || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".")
                })
            else { return nil }
        }
        if let port {
            guard !port.isEmpty, port.count <= 5, port.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }) else {
                return nil
            }
        }
        return String(host)
    }

    /// The target to keep: the parser admits only origin-form targets and `*` (which becomes `/`).
    static func path(of target: String) -> String { target.hasPrefix("/") ? target : "/" }
}
