import RoostCore
import RoostStore
import RoostTestSupport
import Synchronization
import Testing

@testable import RoostPostgres

@Suite("PostgreSQL login throttle store")
struct DriverLoginThrottleTests {
    static let limits = LoginThrottle.Limits(perAccount: 3, perAddress: 5, window: 60_000)

    /// Two instances' throttles (each with its own pool) on one fresh database.
    private func withTwoInstances(
        _ body: (LoginThrottle, LoginThrottle, PostgresLoginThrottleStore, ManualWallClock) async throws ->
            Void
    ) async throws {
        try await PostgresTestDatabase.with { test in
            let clock = ManualWallClock()
            let first = try PostgresDatabase(
                configuration: test.configuration, migrations: PostgresLoginThrottleStore.migrations)
            let second = try PostgresDatabase(
                configuration: test.configuration, migrations: PostgresLoginThrottleStore.migrations)
            let store = PostgresLoginThrottleStore(database: first)
            do {
                try await body(
                    LoginThrottle(limits: Self.limits, clock: clock, failures: store),
                    LoginThrottle(
                        limits: Self.limits, clock: clock,
                        failures: PostgresLoginThrottleStore(database: second)),
                    store, clock)
            } catch {
                await first.close()
                await second.close()
                throw error
            }
            await first.close()
            await second.close()
        }
    }

    @Test func failuresOnOneInstanceThrottleTheOther() async throws {
        try await withTwoInstances { first, second, _, clock in
            try await first.recordFailure(account: "user:ann", address: "192.0.2.1")
            clock.advance(milliseconds: 10_000)
            try await second.recordFailure(account: "user:ann", address: "192.0.2.2")
            #expect(try await first.retryAfter(account: "user:ann", address: "192.0.2.3") == nil)
            try await first.recordFailure(account: "user:ann", address: "192.0.2.3")
            // Three failures within the window: the first, 10 s ago, expires in 50 s.
            #expect(try await second.retryAfter(account: "user:ann", address: "198.51.100.1") == 50)
            #expect(try await first.retryAfter(account: "user:bob", address: "198.51.100.1") == nil)
        }
    }

    @Test func anAddressIsCountedAcrossAccountsAndInstances() async throws {
        try await withTwoInstances { first, second, _, _ in
            for number in 0..<5 {
                let throttle = number.isMultiple(of: 2) ? first : second
                try await throttle.recordFailure(account: "name:user\(number)", address: "203.0.113.9")
            }
            #expect(try await first.retryAfter(account: "name:someone-else", address: "203.0.113.9") == 60)
            #expect(try await second.retryAfter(account: "name:someone-else", address: "203.0.113.10") == nil)
        }
    }

    @Test func failuresExpireWithTheWindowAndTheirRowsAreSwept() async throws {
        try await withTwoInstances { first, _, store, clock in
            for _ in 0..<3 { try await first.recordFailure(account: "user:ann", address: "192.0.2.1") }
            #expect(try await first.retryAfter(account: "user:ann", address: "192.0.2.1") != nil)
            clock.advance(milliseconds: 60_000)
            #expect(try await first.retryAfter(account: "user:ann", address: "192.0.2.1") == nil)
            // A failure's write sweeps rows idle past the retention (longer than any window).
            try await first.recordFailure(account: "user:bob", address: "192.0.2.2")
            #expect(
                try await store.storedKeys() == ["a:user:ann", "a:user:bob", "i:192.0.2.1", "i:192.0.2.2"])
            clock.advance(milliseconds: loginFailureRetention)
            try await first.recordFailure(account: "user:carl", address: "192.0.2.3")
            #expect(try await store.storedKeys() == ["a:user:carl", "i:192.0.2.3"])
        }
    }

    @Test func aSuccessClearsTheAccountButNotTheAddress() async throws {
        try await withTwoInstances { first, second, _, _ in
            for _ in 0..<3 { try await first.recordFailure(account: "user:ann'; --", address: "192.0.2.1") }
            for _ in 0..<2 { try await first.recordFailure(account: "user:bob", address: "192.0.2.1") }
            #expect(try await second.retryAfter(account: "user:ann'; --", address: "198.51.100.1") != nil)
            await second.recordSuccess(account: "user:ann'; --")
            #expect(try await first.retryAfter(account: "user:ann'; --", address: "198.51.100.1") == nil)
            #expect(try await first.retryAfter(account: "user:carl", address: "192.0.2.1") == 60)
        }
    }

    @Test func theInMemoryStoreKeepsTheSameCounts() async throws {
        let clock = ManualWallClock()
        let throttle = LoginThrottle(limits: Self.limits, clock: clock)
        for _ in 0..<3 { try await throttle.recordFailure(account: "user:ann", address: "192.0.2.1") }
        #expect(try await throttle.retryAfter(account: "user:ann", address: "192.0.2.2") == 60)
        clock.advance(milliseconds: 60_000)
        #expect(try await throttle.retryAfter(account: "user:ann", address: "192.0.2.2") == nil)
    }

    /// Found by the audit of what several instances share: the sweep of a failed login used the
    /// login's 15-minute window and erased the hour-long registration counts kept beside it.
    @Test func aLoginFailureKeepsTheRegistrationCountsOfItsLongerWindow() async throws {
        let limits = LoginThrottle.Limits(
            perAccount: 3, perAddress: 5, window: 15 * 60_000, registrationsPerAddress: 2,
            registrationWindow: 60 * 60_000)
        try await PostgresTestDatabase.with { test in
            let clock = ManualWallClock()
            let database = try PostgresDatabase(
                configuration: test.configuration, migrations: PostgresLoginThrottleStore.migrations)
            let throttle = LoginThrottle(
                limits: limits, clock: clock, failures: PostgresLoginThrottleStore(database: database))
            try await Self.registrationsOutliveALoginSweep(throttle, clock)
            await database.close()
        }
        let clock = ManualWallClock()
        let inMemory = InMemoryLoginFailures()
        let throttle = LoginThrottle(limits: limits, clock: clock, failures: inMemory)
        // In memory the sweep runs past 100,000 keys.
        for number in 0...100_000 { inMemory.recordFailure(of: ["x\(number)"], at: 0, droppingThrough: -1) }
        try await Self.registrationsOutliveALoginSweep(throttle, clock)
    }

    static func registrationsOutliveALoginSweep(_ throttle: LoginThrottle, _ clock: ManualWallClock)
        async throws
    {
        #expect(try await throttle.admitRegistration(client: "203.0.113.7") == nil)
        #expect(try await throttle.admitRegistration(client: "203.0.113.7") == nil)
        clock.advance(milliseconds: 20 * 60_000)
        // A failed login 20 minutes later sweeps with its own 15-minute window.
        try await throttle.recordFailure(account: "user:ann", address: "198.51.100.1")
        #expect(try await throttle.admitRegistration(client: "203.0.113.7") == 40 * 60)
    }
}
