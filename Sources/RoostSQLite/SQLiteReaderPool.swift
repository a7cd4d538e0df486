import CRoostSystem
import CSQLite
import Dispatch
import Foundation
import RoostStore
import Synchronization

/// A bounded pool of reader threads, each with its own connection, for reads whose cost a client
/// controls. Event loops hand such reads here and resume when they finish, so a slow query never
/// holds a loop; each read runs in one transaction (a page and its total agree) under a
/// ``ReadBudget``.
///
/// Threads start with the first read and stop at ``close()``.
final class SQLiteReaderPool: Sendable {
    /// A queued read: runs on a pool thread, or is failed without running.
    private final class Job: Sendable {
        let budget: ReadBudget
        let run: @Sendable (SQLiteConnection) -> Void
        let fail: @Sendable (any Error) -> Void

        init(
            budget: ReadBudget, run: @escaping @Sendable (SQLiteConnection) -> Void,
            fail: @escaping @Sendable (any Error) -> Void
        ) {
            self.budget = budget
            self.run = run
            self.fail = fail
        }
    }

    private struct State {
        var jobs: [Job] = []
        var head = 0
        var started = false
        var closed = false
        var running = 0
        /// Jobs taken by a thread so far.
        var taken = 0
        /// Threads that ended because they could not get their priority back; enqueue replaces them.
        var retired = 0
        var onStopped: CheckedContinuation<Void, Never>?

        var waiting: Int { jobs.count - head }

        mutating func take() -> Job? {
            guard head < jobs.count else { return nil }
            let job = jobs[head]
            head += 1
            taken += 1
            if head > 64, head * 2 > jobs.count {
                jobs.removeFirst(head)
                head = 0
            }
            return job
        }
    }

    let path: String
    let limits: ReadLimits
    private let state = Mutex(State())
    private let wake = DispatchSemaphore(value: 0)

    init(path: String, limits: ReadLimits) {
        self.path = path
        self.limits = limits
    }

    /// Runs `body` on a pool thread inside one read transaction and returns its result.
    ///
    /// Throws ``StoreError/busy`` when too many reads wait, ``StoreError/timeout(after:)`` when the read
    /// outlives its budget, and `CancellationError` when the calling task is cancelled (the
    /// statement in progress is interrupted).
    func read<T: Sendable>(
        transaction: Bool = true, _ body: @escaping @Sendable (SQLiteConnection) throws -> T
    )
        async throws -> T
    {
        let budget = ReadBudget(timeout: limits.timeout, slowAfter: limits.slowAfter)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
                let job = Job(
                    budget: budget,
                    run: { connection in
                        continuation.resume(
                            with: Result {
                                try Self.execute(
                                    body, on: connection, budget: budget, limit: self.limits.timeout,
                                    transaction: transaction)
                            })
                    },
                    fail: { continuation.resume(throwing: $0) })
                if let refusal = enqueue(job) { job.fail(refusal) }
            }
        } onCancel: {
            budget.cancel()
        }
    }

    /// Reads waiting for a thread.
    var waiting: Int { state.withLock { $0.waiting } }

    /// Reads the threads have taken so far.
    var taken: Int { state.withLock { $0.taken } }

    /// Queues a job, starting the threads on first use; the error when it cannot be queued.
    private func enqueue(_ job: Job) -> (any Error)? {
        let (refusal, startThreads): ((any Error)?, Int) = state.withLock { state in
            if state.closed { return (StoreError.closed, 0) }
            if state.waiting >= limits.queueLimit { return (StoreError.busy, 0) }
            state.jobs.append(job)
            var start = state.retired
            state.retired = 0
            if !state.started {
                state.started = true
                start = limits.threads
            }
            state.running += start
            return (nil, start)
        }
        // Started here, on the caller's thread, so they begin at its (normal) priority.
        for index in 0..<startThreads { startThread(index) }
        if refusal == nil { wake.signal() }
        return refusal
    }

    private func startThread(_ index: Int) {
        let thread = Thread { [self] in
            var connection: SQLiteConnection?
            var retiring = false
            while true {
                wake.wait()
                let (job, closed) = state.withLock { ($0.take(), $0.closed) }
                guard let job else {
                    if closed { break }
                    continue
                }
                if job.budget.isCancelled {
                    job.fail(CancellationError())
                    continue
                }
                do {
                    if connection == nil { connection = try SQLiteConnection(path: path, readOnly: true) }
                    job.run(connection!)
                } catch {
                    job.fail(error)
                }
                // A slow read lowered this thread's priority; without the right to raise it again
                // (unprivileged processes lack it), the thread ends and a new one replaces it.
                if job.budget.isSlow, roost_set_thread_nice(0) != 0 {
                    retiring = true
                    break
                }
            }
            connection = nil
            let finished = state.withLock { state -> CheckedContinuation<Void, Never>? in
                state.running -= 1
                if retiring, !state.closed { state.retired += 1 }
                return state.running == 0 ? state.onStopped.take() : nil
            }
            finished?.resume()
        }
        thread.name = "roost-query-\(index)"  // at most 15 bytes: the kernel's limit for thread names
        thread.start()
    }

    /// Fails reads still waiting, lets running ones finish, and returns once every thread has
    /// closed its connection and exited.
    func close() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let (abandoned, threads, stoppedAlready): ([Job], Int, Bool) = state.withLock { state in
                state.closed = true
                let abandoned = Array(state.jobs[state.head...])
                state.jobs = []
                state.head = 0
                if state.running == 0 { return (abandoned, 0, true) }
                state.onStopped = continuation
                return (abandoned, state.running, false)
            }
            for job in abandoned { job.fail(StoreError.closed) }
            for _ in 0..<threads { wake.signal() }
            if stoppedAlready { continuation.resume() }
        }
    }

    /// Runs `body` in a read transaction under `budget`; nil when the budget ran out first.
    static func attempt<T>(
        _ body: (SQLiteConnection) throws -> T, on connection: SQLiteConnection, budget: ReadBudget,
        transaction: Bool = true
    ) throws -> T? {
        do {
            return try execute(body, on: connection, budget: budget, limit: .zero, transaction: transaction)
        } catch StoreError.timeout(after: .zero) {
            return nil
        }
    }

    private static func execute<T>(
        _ body: (SQLiteConnection) throws -> T, on connection: SQLiteConnection, budget: ReadBudget,
        limit: Duration, transaction: Bool
    ) throws -> T {
        connection.budget = budget
        // Prepared once per connection (run caches statements), unlike execute's text.
        do {
            if transaction { try connection.run("BEGIN") }
            let result = try body(connection)
            connection.budget = nil
            if transaction { try connection.run("COMMIT") }
            return result
        } catch {
            connection.budget = nil
            if transaction { _ = try? connection.run("ROLLBACK") }
            guard budget.isExhausted else { throw error }
            if budget.isCancelled { throw CancellationError() }
            throw StoreError.timeout(after: limit)
        }
    }
}
