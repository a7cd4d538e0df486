import RoostCore
import RoostHTTP
import Synchronization

/// Makes the id every answer carries in `X-Request-Id` and every log line of its request names.
///
/// An id is 15 characters: 6 random ones fixed for the process (so two runs' ids differ) and a
/// 9-character counter, in lower-case base 32. Fifteen bytes fit in a Swift small string, so an
/// id costs one atomic increment and no allocation.
final class RequestIDs: Sendable {
    /// The header a trusted proxy may send its own id in, and the answer carries.
    static let header = AccessLog.requestIDHeader
    /// The longest id taken from a proxy.
    static let maximumForwardedLength = 128
    private static let digits = Array("0123456789abcdefghijklmnopqrstuv".utf8)
    private let prefix: UInt64
    private let counter = Atomic<UInt64>(0)
    private let trustedProxies: TrustedProxies

    init(trustedProxies: TrustedProxies) {
        self.trustedProxies = trustedProxies
        prefix = UInt64.random(in: 0..<(1 << 30))
    }

    /// A new id.
    func next() -> String {
        let count = counter.add(1, ordering: .relaxed).newValue
        return String(unsafeUninitializedCapacity: 15) { buffer in
            for index in 0..<6 {
                buffer[index] = Self.digits[Int((prefix >> (5 * UInt64(5 - index))) & 31)]
            }
            for index in 0..<9 {
                buffer[6 + index] = Self.digits[Int((count >> (5 * UInt64(8 - index))) & 31)]
            }
            return 15
        }
    }

    /// The request's id: the one a trusted proxy sent in `X-Request-Id` when it is short and
    /// printable, else a new one.
    func id(for request: Request) -> String {
        if !trustedProxies.isEmpty, let given = request.headers[Self.header], Self.isAcceptable(given),
            trustedProxies.contains(request.peerAddress)
        {
            return given
        }
        return next()
    }

    /// 1 to 128 visible ASCII characters: nothing that could break a log line or a header.
    static func isAcceptable(_ id: String) -> Bool {
        (1...maximumForwardedLength).contains(id.utf8.count)
            && id.utf8.allSatisfy { (0x21...0x7e).contains($0) }
    }
}

/// Gives every request its id before anything else sees it, and every answer the id in
/// `X-Request-Id`.
struct RequestIDMiddleware: HTTPMiddleware {
    let requestIDs: RequestIDs

    func respond(to request: Request, next: MiddlewareChain.Next) async -> Response {
        var request = request
        request.requestID = requestIDs.id(for: request)
        var response = await next.respond(to: request)
        response.headers.add(RequestIDs.header, request.requestID)
        return response
    }

    func admit(_ request: Request, next: MiddlewareChain.Next) async -> Response? {
        var request = request
        request.requestID = requestIDs.id(for: request)
        guard var refusal = await next.admit(request) else { return nil }
        refusal.headers.add(RequestIDs.header, request.requestID)
        return refusal
    }
}
