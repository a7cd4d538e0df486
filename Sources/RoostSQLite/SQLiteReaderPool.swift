import CRoostSystem
import CSQLite
import Foundation
import RoostStore
import RoostThreads

/// A bounded pool of reader threads, each with its own connection, for reads whose cost a client
/// controls. Event loops hand such reads here and resume when they finish, so a slow query never
/// holds a loop; each read runs in one transaction (a page and its total agree) under a
/// ``ReadBudget``.
///
/// Threads start with the first read and stop at ``close()``.
final class SQLiteReaderPool: Sendable {
    /// What a reader thread owns: its connection, opened by its first read.
    struct ReaderThread {
        var connection: SQLiteConnection?
        /// A slow read lowered the thread's priority and it could not raise it again.
        var mustRetire = false
    }

    let path: String
    let limits: ReadLimits
    private let threads: ThreadPool<ReaderThread>

    init(path: String, limits: ReadLimits) {
        self.path = path
        self.limits = limits
        threads = ThreadPool(
            name: "roost-query", threads: limits.threads,
            // A slow read lowered its thread's priority; without the right to raise it again
            // (unprivileged processes lack it), the thread ends and the next read, on its
            // caller's thread at normal priority, starts one in its place.
            retiresThread: { $0.mustRetire },
            makeResource: { _ in ReaderThread() },
            // Closed before close() returns, so the writer, closed last, removes the WAL.
            releaseResource: { _, reader in reader.connection = nil })
    }

    /// Runs `body` on a pool thread inside one read transaction and returns its result.
    ///
    /// Throws ``StoreError/busy`` when too many reads wait, ``StoreError/timeout(after:)`` when the read
    /// outlives its budget, ``StoreError/closed`` after ``close()``, and `CancellationError` when
    /// the calling task is cancelled (the statement in progress is interrupted).
    func read<T: Sendable>(
        transaction: Bool = true, _ body: @escaping @Sendable (SQLiteConnection) throws -> T
    )
        async throws -> T
    {
        let budget = ReadBudget(timeout: limits.timeout, slowAfter: limits.slowAfter)
        let (path, limit) = (path, limits.timeout)
        do {
            return try await withTaskCancellationHandler {
                // The budget, not the pool, hears the cancellation: it also interrupts a read
                // that has started.
                try await threads.run(waitingLimit: limits.queueLimit, ignoringCancellation: true) { reader in
                    if budget.isCancelled { throw CancellationError() }
                    defer { if budget.isSlow, roost_set_thread_nice(0) != 0 { reader.mustRetire = true } }
                    if reader.connection == nil {
                        reader.connection = try SQLiteConnection(path: path, readOnly: true)
                    }
                    return try Self.execute(
                        body, on: reader.connection!, budget: budget, limit: limit, transaction: transaction)
                }
            } onCancel: {
                budget.cancel()
            }
        } catch is ThreadPool<ReaderThread>.QueueFull {
            throw StoreError.busy
        } catch is ThreadPool<ReaderThread>.Stopped {
            throw StoreError.closed
        }
    }

    /// Reads waiting for a thread.
    var waiting: Int { threads.waiting }

    /// Reads the threads have taken so far.
    var taken: Int { threads.started }

    /// Reads running on a reader thread now.
    var running: Int { threads.running }

    /// Fails reads still waiting, lets running ones finish, and returns once every thread has
    /// closed its connection and exited.
    func close() async {
        await threads.shutdown(abandoningWaiting: StoreError.closed)
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
