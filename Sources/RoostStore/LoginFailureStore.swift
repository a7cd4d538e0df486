import Synchronization

/// Where the login throttle keeps the times of failed logins, by key (an account or an
/// address). In memory it is one instance's view; in a shared database every instance counts
/// the same failures.
public protocol LoginFailureStore: Sendable {
    /// Each key's failure times after `since` (milliseconds), oldest first; keys without any are absent.
    func failures(of keys: [String], after since: Int64) async throws -> [String: [Int64]]
    /// Adds a failure at `now` to each key; times at or before `since` are no longer needed.
    func recordFailure(of keys: [String], at now: Int64, droppingThrough since: Int64) async throws
    /// Forgets a key's failures.
    func forget(_ key: String) async throws
}

/// How long a store keeps a key whose newest failure is older, in milliseconds: longer than any
/// window counted in it (logins 15 minutes, registrations and password resets an hour). A sweep by
/// one caller's own window erased the others' counts: a failed login emptied the hour's
/// registration and reset counts, four times the limits for whoever triggered it.
public let loginFailureRetention: Int64 = 24 * 60 * 60 * 1000

/// Failure times in this process's memory: the default with SQLite, where one instance serves.
public final class InMemoryLoginFailures: LoginFailureStore {
    private let table = Mutex<[String: [Int64]]>([:])
    /// Keys kept at most before those with no recent failure are dropped.
    private static let maximumKeys = 100_000

    public init() {}

    public func failures(of keys: [String], after since: Int64) -> [String: [Int64]] {
        table.withLock { table in
            var found: [String: [Int64]] = [:]
            for key in keys {
                let recent = (table[key] ?? []).filter { $0 > since }
                if !recent.isEmpty { found[key] = recent }
            }
            return found
        }
    }

    public func recordFailure(of keys: [String], at now: Int64, droppingThrough since: Int64) {
        table.withLock { table in
            if table.count > Self.maximumKeys {
                table = table.filter { $0.value.contains { $0 > now - loginFailureRetention } }
            }
            for key in keys {
                var times = table[key, default: []].filter { $0 > since }
                times.append(now)
                table[key] = times
            }
        }
    }

    public func forget(_ key: String) {
        table.withLock { _ = $0.removeValue(forKey: key) }
    }
}
