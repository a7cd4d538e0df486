import Synchronization

/// Counts failed logins per account and per address in a sliding window, and says how long a
/// client must wait once either is over its limit. In memory: one instance's view.
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
    private let failures = Mutex<[String: [Int64]]>([:])
    private static let maximumKeys = 100_000

    public init(limits: Limits = Limits(), clock: any Clock) {
        self.limits = limits
        self.clock = clock
    }

    /// Seconds to wait before trying again, or nil when a login may be attempted.
    public func retryAfter(account: String, address: String) -> Int? {
        let now = clock.nowMilliseconds()
        return failures.withLock { table in
            let waits = [
                wait(table["a:" + account], limit: limits.perAccount, now: now),
                wait(table["i:" + address], limit: limits.perAddress, now: now),
            ].compactMap { $0 }
            return waits.max()
        }
    }

    /// Records a failed attempt.
    public func recordFailure(account: String, address: String) {
        let now = clock.nowMilliseconds()
        failures.withLock { table in
            if table.count > Self.maximumKeys { prune(&table, now: now) }
            for key in ["a:" + account, "i:" + address] {
                var times = table[key, default: []].filter { now - $0 < limits.window }
                times.append(now)
                table[key] = times
            }
        }
    }

    /// A successful login clears its account's failures.
    public func recordSuccess(account: String) {
        failures.withLock { _ = $0.removeValue(forKey: "a:" + account) }
    }

    private func wait(_ times: [Int64]?, limit: Int, now: Int64) -> Int? {
        guard let times else { return nil }
        let recent = times.filter { now - $0 < limits.window }
        guard recent.count >= limit, let oldest = recent.first else { return nil }
        return Int((oldest + limits.window - now + 999) / 1000)
    }

    private func prune(_ table: inout [String: [Int64]], now: Int64) {
        table = table.filter { $0.value.contains { now - $0 < limits.window } }
    }
}
