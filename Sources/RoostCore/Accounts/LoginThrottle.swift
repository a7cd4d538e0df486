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

        public init(perAccount: Int = 5, perAddress: Int = 20, window: Int64 = 15 * 60 * 1000) {
            self.perAccount = perAccount
            self.perAddress = perAddress
            self.window = window
        }
    }

    private let limits: Limits
    private let clock: any Clock
    private let failures: any LoginFailureStore

    public init(
        limits: Limits = Limits(), clock: any Clock, failures: any LoginFailureStore = InMemoryLoginFailures()
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

    private static func accountKey(_ account: String) -> String { "a:" + account }
    private static func addressKey(_ address: String) -> String { "i:" + address }

    private func wait(_ times: [Int64]?, limit: Int, now: Int64) -> Int? {
        guard let times, times.count >= limit, let oldest = times.min() else { return nil }
        return Int((oldest + limits.window - now + 999) / 1000)
    }
}
