import RoostStore

/// Counts failed logins per account and per address in a sliding window, and says how long a
/// client must wait once either is over its limit. The counts live in a ``LoginFailureStore``:
/// in memory by default (one instance's view), or in the shared database so that every instance
/// behind a load balancer counts the same failures.
public final class LoginThrottle: Sendable {
    public struct Limits: Sendable {
        public var perAccount: Int
        public var perAddress: Int
        /// Milliseconds a failure counts against its account and address.
        public var window: Int64

        /// Registrations a client address (an IPv6 /64 as one) may attempt per
        /// `registrationWindow`; 0 for no limit (`--max-registrations`).
        public var registrationsPerAddress: Int
        /// Milliseconds a registration counts against its address.
        public var registrationWindow: Int64

        public init(
            perAccount: Int = 5, perAddress: Int = 20, window: Int64 = 15 * 60 * 1000,
            registrationsPerAddress: Int = 10, registrationWindow: Int64 = 60 * 60 * 1000
        ) {
            self.perAccount = perAccount
            self.perAddress = perAddress
            self.window = window
            self.registrationsPerAddress = registrationsPerAddress
            self.registrationWindow = registrationWindow
        }
    }

    private let limits: Limits
    private let clock: any WallClock
    private let failures: any LoginFailureStore

    public init(
        limits: Limits = Limits(), clock: any WallClock, failures: any LoginFailureStore = InMemoryLoginFailures()
    ) {
        self.limits = limits
        self.clock = clock
        self.failures = failures
    }

    /// Seconds to wait before trying again, or nil when a login may be attempted.
    public func retryAfter(account: String, address: String) async throws -> Int? {
        let now = clock.nowMilliseconds()
        let (accountKey, addressKey) = (Self.accountKey(account), Self.addressKey(address))
        let recent = try await failures.failures(of: [accountKey, addressKey], after: now - limits.window)
        return [
            wait(recent[accountKey], limit: limits.perAccount, now: now),
            wait(recent[addressKey], limit: limits.perAddress, now: now),
        ].compactMap { $0 }.max()
    }

    /// Records a failed attempt.
    public func recordFailure(account: String, address: String) async throws {
        let now = clock.nowMilliseconds()
        try await failures.recordFailure(
            of: [Self.accountKey(account), Self.addressKey(address)], at: now,
            droppingThrough: now - limits.window)
    }

    /// A successful login clears its account's failures. Best effort: failures that could not be
    /// cleared only expire with their window.
    public func recordSuccess(account: String) async {
        try? await failures.forget(Self.accountKey(account))
    }

    /// Counts a registration attempt by `client` (the address's throttling key): nil when it may
    /// go on, else the seconds to wait. Checked before the body is even looked at, so the answer
    /// never depends on whether a name is taken. The attempt is counted before it is checked
    /// again, so parallel attempts cannot all slip past the limit; one refused at the first check
    /// is not counted, so a client hammering the endpoint does not grow the store.
    public func admitRegistration(client: String) async throws -> Int? {
        let limit = limits.registrationsPerAddress
        guard limit > 0 else { return nil }
        let key = Self.registrationKey(client)
        let now = clock.nowMilliseconds()
        let since = now - limits.registrationWindow
        if let wait = registrationWait(try await failures.failures(of: [key], after: since)[key], now: now) {
            return wait
        }
        try await failures.recordFailure(of: [key], at: now, droppingThrough: since)
        return registrationWait(
            try await failures.failures(of: [key], after: since)[key], now: now, counted: true)
    }

    /// Nil when `times` leave room for this attempt (`counted`: they include it), else the seconds
    /// until the window holds fewer than the limit's attempts, so that the next one goes in.
    private func registrationWait(_ times: [Int64]?, now: Int64, counted: Bool = false) -> Int? {
        let limit = limits.registrationsPerAddress
        guard let times, times.count >= limit + (counted ? 1 : 0) else { return nil }
        let freeing = times.sorted()[times.count - limit]
        return max(1, Int((freeing + limits.registrationWindow - now + 999) / 1000))
    }

    private static func registrationKey(_ client: String) -> String { "r:" + client }
    private static func accountKey(_ account: String) -> String { "a:" + account }
    private static func addressKey(_ address: String) -> String { "i:" + address }

    private func wait(_ times: [Int64]?, limit: Int, now: Int64) -> Int? {
        guard let times, times.count >= limit, let oldest = times.min() else { return nil }
        return Int((oldest + limits.window - now + 999) / 1000)
    }
}
