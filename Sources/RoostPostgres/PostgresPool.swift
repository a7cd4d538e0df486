import Dispatch
import Foundation
import RoostStore
import RoostThreads
import Synchronization

/// A bounded pool of threads, each owning one connection. Callers queue a job and resume when a
/// thread has run it, so no event loop ever waits on a round trip.
///
/// A thread checks its idle connection before each job and reconnects when it is gone. While
/// the server cannot be reached, reconnecting backs off (up to ``maximumBackoff``) and jobs fail
/// at once with ``StoreError/unavailable`` instead of waiting.
final class PostgresPool: Sendable {
    enum Mode: Sendable {
        /// Autocommit.
        case plain
        /// BEGIN … COMMIT, READ COMMITTED.
        case transaction
        /// One REPEATABLE READ, READ ONLY transaction.
        case snapshot
    }

    static let maximumBackoff: Duration = .seconds(5)
    static let firstBackoff: Duration = .milliseconds(100)

    let configuration: PostgresConfiguration
    private let threads: ThreadPool<PostgresConnection?>
    private let availability = Availability()

    init(configuration: PostgresConfiguration) {
        self.configuration = configuration
        let idle = configuration.idleConnectionTimeout.components
        threads = ThreadPool(
            name: "roost-pg", threads: max(1, configuration.poolSize),
            // An idle connection is closed after a while, so that a quiet instance holds none of
            // the server's connection slots; the next job connects again.
            idle: (
                after: Double(idle.seconds) + Double(idle.attoseconds) / 1e18,
                work: { connection in
                    connection?.close()
                    connection = nil
                }
            ),
            makeResource: { _ in nil },
            releaseResource: { _, connection in
                connection?.close()
                connection = nil
            })
        threads.start()
    }

    /// Jobs waiting for a thread.
    var waiting: Int { threads.waiting }
    /// Jobs running on a thread now.
    var running: Int { threads.running }

    func run<T: Sendable>(_ mode: Mode, _ body: @escaping @Sendable (PostgresConnection) throws -> T)
        async throws -> T
    {
        let control = JobControl()
        let timeout = configuration.statementTimeout
        do {
            // Cancelled while it waits, the job is dropped by the pool; while it runs, `control`
            // sends the server a cancel request.
            return try await withTaskCancellationHandler {
                try await threads.run(waitingLimit: configuration.maxQueuedJobs) { connection in
                    try self.runOnThread(
                        mode, body, control: control, timeout: timeout, connection: &connection)
                }
            } onCancel: {
                control.cancel()
            }
        } catch is ThreadPool<PostgresConnection?>.QueueFull {
            throw StoreError.busy
        } catch is ThreadPool<PostgresConnection?>.Stopped {
            throw StoreError.closed
        }
    }

    /// Runs a job on the thread's connection, connecting first when it has none that is ready,
    /// and once more on a new one when it turned out dead before the job did anything.
    private func runOnThread<T>(
        _ mode: Mode, _ body: (PostgresConnection) throws -> T, control: JobControl, timeout: Duration,
        connection: inout PostgresConnection?
    ) throws -> T {
        let outcome: Result<T, any Error>
        do {
            var ready = try readyConnection(connection)
            connection = ready
            if let first = Self.attempt(
                mode, body, control: control, timeout: timeout, on: ready, mayRetry: true)
            {
                outcome = first
            } else {
                ready = try readyConnection(nil)
                connection = ready
                outcome = Self.attempt(
                    mode, body, control: control, timeout: timeout, on: ready, mayRetry: false)!
            }
            ready.cancelHandle.waitForSends()
            if ready.isInTransaction { try? ready.execute("ROLLBACK") }
        } catch {
            connection = nil
            throw error
        }
        return try outcome.get()
    }

    /// `connection` if it can take a job, else a new one; throws ``StoreError/unavailable`` at
    /// once while the server is unreachable and the backoff has not run out.
    private func readyConnection(_ connection: PostgresConnection?) throws -> PostgresConnection {
        if let connection, connection.isReady { return connection }
        connection?.close()
        guard availability.mayConnect() else { throw StoreError.unavailable }
        do {
            let fresh = try PostgresConnection(configuration: configuration)
            availability.connected()
            return fresh
        } catch {
            availability.failed()
            throw StoreError.unavailable
        }
    }

    /// Refuses new jobs, lets queued and running ones finish, then closes every connection and
    /// returns once every thread has ended.
    func close() async {
        await threads.shutdown()
    }

    /// When threads may try to connect: always while the server answers; after a failure, one
    /// thread at a time once the backoff has run out. (The blob store's connections use it too.)
    final class Availability: Sendable {
        private struct State {
            var failures = 0
            var retryAt: ContinuousClock.Instant?
            var probing = false
        }
        private let state = Mutex(State())

        func mayConnect() -> Bool {
            state.withLock { state in
                guard state.failures > 0 else { return true }
                if state.probing { return false }
                if let retryAt = state.retryAt, ContinuousClock.now < retryAt { return false }
                state.probing = true
                return true
            }
        }

        func connected() { state.withLock { $0 = State() } }

        func failed() {
            state.withLock { state in
                state.failures += 1
                let doubling = min(state.failures - 1, 10)
                let backoff = min(PostgresPool.maximumBackoff, PostgresPool.firstBackoff * (1 << doubling))
                state.retryAt = ContinuousClock.now + backoff
                state.probing = false
            }
        }
    }
}

/// Whether a job's task was cancelled, and the cancel request to send when it runs then.
final class JobControl: Sendable {
    private struct State {
        var cancelled = false
        var running: PostgresCancelHandle?
    }
    private let state = Mutex(State())

    var isCancelled: Bool { state.withLock { $0.cancelled } }

    /// Marks the job running on a connection; false when its task was cancelled first.
    func begin(_ cancel: PostgresCancelHandle) -> Bool {
        state.withLock { state in
            guard !state.cancelled else { return false }
            state.running = cancel
            return true
        }
    }

    /// Marks the job done; whether its task was cancelled.
    func end() -> Bool {
        state.withLock { state in
            state.running = nil
            return state.cancelled
        }
    }

    func cancel() {
        state.withLock { state in
            state.cancelled = true
            // Sent under the lock, so the job cannot end and its connection start another first.
            state.running?.send()
        }
    }
}

extension PostgresPool {
    /// One try of a job on `connection`: its outcome, or nil when `mayRetry` and the connection
    /// turned out dead at the job's BEGIN, before anything reached the server.
    fileprivate static func attempt<T>(
        _ mode: Mode, _ body: (PostgresConnection) throws -> T, control: JobControl, timeout: Duration,
        on connection: PostgresConnection, mayRetry: Bool
    ) -> Result<T, any Error>? {
        guard control.begin(connection.cancelHandle) else { return .failure(CancellationError()) }
        let outcome = Result { try execute(mode, body, on: connection) }
        let cancelled = control.end()
        if mayRetry, !cancelled, case .failure(let error) = outcome, error is DeadBeforeBegin { return nil }
        return outcome.mapError {
            translate($0, cancelled: cancelled, connection: connection, timeout: timeout)
        }
    }

    private static func execute<T>(
        _ mode: Mode, _ body: (PostgresConnection) throws -> T, on connection: PostgresConnection
    ) throws -> T {
        do {
            switch mode {
            case .plain: return try body(connection)
            case .transaction: try connection.execute("BEGIN")
            case .snapshot: try connection.execute("BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            }
        } catch let error as PostgresError where mode != .plain && error.isConnectionFailure {
            // Safe to run again elsewhere: a transaction that never began changed nothing.
            throw DeadBeforeBegin(underlying: error)
        }
        do {
            let result = try body(connection)
            try connection.execute("COMMIT")
            return result
        } catch {
            if connection.isConnected { try? connection.execute("ROLLBACK") }
            throw error
        }
    }

    /// What the caller sees of a failure: cancellation, the statement deadline, or the server gone.
    private static func translate(
        _ error: any Error, cancelled: Bool, connection: PostgresConnection, timeout: Duration
    ) -> any Error {
        if cancelled { return CancellationError() }
        if error is DeadBeforeBegin { return StoreError.unavailable }
        if let error = error as? PostgresError {
            if error.isQueryCanceled { return StoreError.timeout(after: timeout) }
            if error.isConnectionFailure { return StoreError.unavailable }
            if error.isUnstorableText { return StoreError.unstorableText }
        }
        if !connection.isConnected { return StoreError.unavailable }
        return error
    }
}

/// The connection was found dead when the job's transaction was to begin.
private struct DeadBeforeBegin: Error {
    let underlying: PostgresError
}

extension Duration {
    /// The duration as Dispatch counts time.
    var dispatchInterval: DispatchTimeInterval {
        let (seconds, attoseconds) = components
        return .nanoseconds(Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000))
    }
}
