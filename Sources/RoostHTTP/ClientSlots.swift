import Synchronization

/// Counts work in progress, in all and per client (an address or a user), so that neither one
/// client nor many can hold a scarce resource: the streamed bodies (uploads) being received, the
/// script workers running extensions.
public final class ClientSlots: Sendable {
    private struct Counts {
        var total = 0
        var byClient: [String: Int] = [:]
    }
    private let counts = Mutex(Counts())

    public init() {}

    /// Takes a slot for `client`; false when `total` or `perClient` are reached.
    public func acquire(_ client: String, total: Int, perClient: Int) -> Bool {
        counts.withLock { counts in
            let mine = counts.byClient[client, default: 0]
            guard counts.total < total, mine < perClient else { return false }
            counts.total += 1
            counts.byClient[client] = mine + 1
            return true
        }
    }

    public func release(_ client: String) {
        counts.withLock { counts in
            counts.total -= 1
            let mine = counts.byClient[client, default: 1] - 1
            counts.byClient[client] = mine > 0 ? mine : nil
        }
    }

    /// Slots taken now, for tests and metrics.
    public var inFlight: Int { counts.withLock { $0.total } }
}

/// Whom per-client limits count an address against: an IPv4 address itself, an IPv6 address's
/// /64 (one subscriber's network holds 2^64 addresses, so counting each apart would count
/// nothing). Text that is not an address is its own key.
public func clientKey(forAddress address: String) -> String {
    guard let parsed = IPAddress(address) else { return address }
    return parsed.isIPv4 ? parsed.text : IPAddress(network64Of: parsed).text + "/64"
}

extension IPAddress {
    /// The /64 network `address` is in.
    init(network64Of address: IPAddress) {
        self = address
        bytes.1 = 0
    }
}
