import Dispatch
import Foundation
import RoostStore
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

    private struct State {
        var jobs: [any PoolJob] = []
        var head = 0
        var closed = false
        var threads = 0
        var running = 0
        var onStopped: CheckedContinuation<Void, Never>?

        var waiting: Int { jobs.count - head }

        mutating func take() -> (any PoolJob)? {
            guard head < jobs.count else { return nil }
            let job = jobs[head]
            head += 1
            if head > 64, head * 2 > jobs.count {
                jobs.removeFirst(head)
                head = 0
            }
            return job
        }
    }

    static let maximumBackoff: Duration = .seconds(5)
    static let firstBackoff: Duration = .milliseconds(100)

    let configuration: PostgresConfiguration
    private let state = Mutex(State())
    private let wake = DispatchSemaphore(value: 0)
    private let availability = Availability()

    init(configuration: PostgresConfiguration) {
        self.configuration = configuration
        let count = max(1, configuration.poolSize)
        state.withLock { $0.threads = count }
        for index in 0..<count { startThread(index) }
    }

    /// Jobs waiting for a thread.
    var waiting: Int { state.withLock { $0.waiting } }
    /// Jobs running on a thread now.
    var running: Int { state.withLock { $0.running } }

    func run<T: Sendable>(_ mode: Mode, _ body: @escaping @Sendable (PostgresConnection) throws -> T)
        async throws -> T
    {
        let control = JobControl()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
                let job = Job(
                    mode: mode, body: body, control: control, continuation: continuation,
                    timeout: configuration.statementTimeout)
                guard control.whileQueued({ job.finish(.failure(CancellationError())) }) else {
                    job.finish(.failure(CancellationError()))
                    return
                }
                let refusal: StoreError? = state.withLock { state in
                    if state.closed { return .closed }
                    if state.waiting >= configuration.maxQueuedJobs { return .busy }
                    state.jobs.append(job)
                    return nil
                }
                if let refusal { job.finish(.failure(refusal)) } else { wake.signal() }
            }
        } onCancel: {
            control.cancel()
        }
    }

    private func startThread(_ index: Int) {
        let thread = Thread { [self] in
            var connection: PostgresConnection?
            let idleTimeout = configuration.idleConnectionTimeout
            while true {
                // An idle connection is closed after a while, so that a quiet instance holds
                // none of the server's connection slots; the next job connects again.
                if connection != nil, wake.wait(timeout: .now() + idleTimeout.dispatchInterval) == .timedOut {
                    connection?.close()
                    connection = nil
                    continue
                }
                if connection == nil { wake.wait() }
                let (job, closed) = state.withLock { state in
                    let job = state.take()
                    if job != nil { state.running += 1 }
                    return (job, state.closed)
                }
                guard let job else {
                    if closed { break }
                    continue
                }
                do {
                    var ready = try readyConnection(connection)
                    connection = ready
                    if !job.run(on: ready, mayRetry: true) {
                        // The connection died before the job did anything: once more on a new one.
                        ready = try readyConnection(nil)
                        connection = ready
                        _ = job.run(on: ready, mayRetry: false)
                    }
                    ready.cancelHandle.waitForSends()
                    if ready.isInTransaction { try? ready.execute("ROLLBACK") }
                } catch {
                    connection = nil
                    job.fail(error)
                }
                state.withLock { $0.running -= 1 }
            }
            connection?.close()
            let finished = state.withLock { state -> CheckedContinuation<Void, Never>? in
                state.threads -= 1
                return state.threads == 0 ? state.onStopped.take() : nil
            }
            finished?.resume()
        }
        thread.name = "roost-pg-\(index)"  // at most 15 bytes: the kernel's limit for thread names
        thread.start()
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
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let threads: Int = state.withLock { state in
                state.closed = true
                if state.threads == 0 { return 0 }
                state.onStopped = continuation
                return state.threads
            }
            if threads == 0 {
                continuation.resume()
                return
            }
            for _ in 0..<threads { wake.signal() }
        }
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

/// A queued job as the threads see it.
protocol PoolJob: AnyObject, Sendable {
    /// Runs the job and resumes its caller; false (without resuming) when `mayRetry` and the
    /// connection turned out dead at the job's BEGIN, before anything reached the server.
    func run(on connection: PostgresConnection, mayRetry: Bool) -> Bool
    func fail(_ error: any Error)
}

/// Whether a job's task was cancelled, and the cancel request to send when it runs then.
final class JobControl: Sendable {
    private struct State {
        var cancelled = false
        var running: PostgresCancelHandle?
        var failQueued: (@Sendable () -> Void)?
    }
    private let state = Mutex(State())

    var isCancelled: Bool { state.withLock { $0.cancelled } }

    /// Registers how to fail the job while it waits; false when the task is cancelled already.
    func whileQueued(_ fail: @escaping @Sendable () -> Void) -> Bool {
        state.withLock { state in
            guard !state.cancelled else { return false }
            state.failQueued = fail
            return true
        }
    }

    /// Marks the job running on a connection; false when its task was cancelled first.
    func begin(_ cancel: PostgresCancelHandle) -> Bool {
        state.withLock { state in
            guard !state.cancelled else { return false }
            state.failQueued = nil
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
        let failQueued = state.withLock { state -> (@Sendable () -> Void)? in
            state.cancelled = true
            // Sent under the lock, so the job cannot end and its connection start another first.
            state.running?.send()
            defer { state.failQueued = nil }
            return state.failQueued
        }
        failQueued?()
    }
}

private final class Job<T: Sendable>: PoolJob {
    let mode: PostgresPool.Mode
    let body: @Sendable (PostgresConnection) throws -> T
    let control: JobControl
    let timeout: Duration
    private let continuation: Mutex<CheckedContinuation<T, any Error>?>

    init(
        mode: PostgresPool.Mode, body: @escaping @Sendable (PostgresConnection) throws -> T,
        control: JobControl, continuation: CheckedContinuation<T, any Error>, timeout: Duration
    ) {
        self.mode = mode
        self.body = body
        self.control = control
        self.timeout = timeout
        self.continuation = Mutex(continuation)
    }

    func run(on connection: PostgresConnection, mayRetry: Bool) -> Bool {
        guard control.begin(connection.cancelHandle) else {
            finish(.failure(CancellationError()))
            return true
        }
        let outcome = Result { try execute(on: connection) }
        let cancelled = control.end()
        if mayRetry, !cancelled, case .failure(let error) = outcome, error is DeadBeforeBegin { return false }
        finish(outcome.mapError { translate($0, cancelled: cancelled, connection: connection) })
        return true
    }

    func fail(_ error: any Error) { finish(.failure(error)) }

    /// Resumes the caller once; later outcomes (a cancelled job that ran anyway) are dropped.
    func finish(_ outcome: Result<T, any Error>) {
        continuation.withLock { $0.take() }?.resume(with: outcome)
    }

    private func execute(on connection: PostgresConnection) throws -> T {
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
    private func translate(_ error: any Error, cancelled: Bool, connection: PostgresConnection) -> any Error {
        if cancelled { return CancellationError() }
        if error is DeadBeforeBegin { return StoreError.unavailable }
        if let error = error as? PostgresError {
            if error.isQueryCanceled { return StoreError.timeout(after: timeout) }
            if error.isConnectionFailure { return StoreError.unavailable }
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
