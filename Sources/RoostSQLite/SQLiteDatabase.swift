import Foundation
import RoostJSON
import RoostStore
import RoostThreads
import Synchronization

/// A SQLite database in WAL mode: one writer thread that group-commits, and a pool of readers.
///
/// Writes queue up and the writer runs as many as are waiting in one transaction, each inside its
/// own savepoint, so one failing write does not undo the others. A write is acknowledged only
/// after its transaction commits.
/// Its connections are never shared: the writer's lives on the writer thread, each reader
/// thread's on that thread, and the idle point readers in a mutex until one is lent.
public final class SQLiteDatabase: Sendable {
    /// A queued write: runs on the writer thread, completes after its transaction commits.
    private protocol PendingWrite: AnyObject, Sendable {
        /// Runs the job; false when it threw, so its savepoint must be rolled back.
        func run(on connection: SQLiteConnection) -> Bool
        func complete(commitError: (any Error)?)
    }

    // @unchecked Sendable: created on the caller's thread, then run and completed on the writer
    // thread only; `result` is never touched by two threads at once.
    private final class WriteJob<T: Sendable>: PendingWrite, @unchecked Sendable {
        private let body: @Sendable (SQLiteConnection) throws -> T
        private let continuation: CheckedContinuation<T, any Error>
        private var result: Result<T, any Error>?

        init(
            body: @escaping @Sendable (SQLiteConnection) throws -> T,
            continuation: CheckedContinuation<T, any Error>
        ) {
            self.body = body
            self.continuation = continuation
        }

        func run(on connection: SQLiteConnection) -> Bool {
            #if DEBUG
                // Closures run SQL only: documents are built before the write is queued.
                let outcome = JSONParseAudit.forbidding { Result { try body(connection) } }
            #else
                let outcome = Result { try body(connection) }
            #endif
            result = outcome
            if case .failure = outcome { return false }
            return true
        }

        func complete(commitError: (any Error)?) {
            if let commitError {
                continuation.resume(throwing: commitError)
            } else {
                continuation.resume(
                    with: result ?? .failure(SQLiteError(code: 1, message: "write did not run")))
            }
            result = nil
        }
    }

    public let path: String
    private final class WriteQueue: Sendable {
        struct State {
            var jobs: [any PendingWrite] = []
            /// Set by ``close()``: new writes are refused, queued ones still run.
            var closed = false
        }
        let state = Mutex(State())
        let wake = DispatchSemaphore(value: 0)
    }

    private let queue = WriteQueue()
    /// The writer's one thread, which owns the writer's connection (nil when it failed to open)
    /// and runs the group-commit loop as its one job until ``close()``.
    private let writerThread: ThreadPool<SQLiteConnection?>
    /// Told after every commit (the change log's readers wake on it).
    private let commitObservers = CommitObservers()
    /// Writes waiting for the writer, for tests that line jobs up in one batch.
    var queuedWriteCount: Int { queue.state.withLock { $0.jobs.count } }
    /// Idle point-read connections; nil once closed.
    private let idleReaders = Mutex<[IdleReader]?>([])

    // @unchecked Sendable: an idle connection is referenced by the list alone; `read` takes it
    // out before lending it to one closure and puts it back after that closure has returned.
    private struct IdleReader: @unchecked Sendable {
        let connection: SQLiteConnection
    }
    /// Reads whose cost a client controls run here, off the event loops, under a deadline.
    private let readerPool: SQLiteReaderPool
    private let maximumIdleReaders = 8
    private static let maximumBatch = 256
    /// The WAL size past which the writer checkpoints it whole and truncates it.
    public let walCheckpointBytes: Int

    /// The default bound on the WAL: SQLite's own checkpoints are passive, and readers that never
    /// pause would let it grow to the size of the database.
    public static let defaultWALCheckpointBytes = 64 << 20

    /// Opens the database file, switches it to WAL and applies `migrations` that are not yet
    /// applied; throws ``SchemaTooNewError`` when the file has migrations `migrations` lacks.
    /// No migrations opens the schema as it is, unchecked (for tools and tests that read it).
    public init(
        path: String, durability: Durability = .normal, readLimits: ReadLimits = ReadLimits(),
        walCheckpointBytes: Int = SQLiteDatabase.defaultWALCheckpointBytes, migrations: [Migration]
    ) throws {
        self.path = path
        self.walCheckpointBytes = walCheckpointBytes
        readerPool = SQLiteReaderPool(path: path, limits: readLimits)
        // The writer's connection is opened, set up and migrated on the writer thread, which owns
        // it from then on, and closed there last of all connections (SQLite then checkpoints the
        // WAL and removes it).
        let openFailure = Mutex<(any Error)?>(nil)
        writerThread = ThreadPool(
            name: "roost-writer", threads: 1,
            makeResource: { _ in
                do {
                    return try SQLiteDatabase.openWriter(
                        path: path, durability: durability, walCheckpointBytes: walCheckpointBytes,
                        migrations: migrations)
                } catch {
                    openFailure.withLock { $0 = error }
                    return nil
                }
            },
            releaseResource: { _, writer in
                writer?.close()
                writer = nil
            })
        // Waits for the connection to open or fail (at startup only).
        let opened = DispatchSemaphore(value: 0)
        writerThread.execute { [queue, commitObservers] writer in
            opened.signal()
            guard let connection = writer else { return }
            let wal = WALPolicy(path: path + "-wal", bound: walCheckpointBytes)
            Self.writerLoop(writer: connection, queue: queue, wal: wal, observers: commitObservers)
        }
        opened.wait()
        if let error = openFailure.withLock({ $0 }) {
            writerThread.beginShutdown()
            throw error
        }
    }

    /// The writer's connection: WAL, the durability asked for, foreign keys, the WAL's bound, and
    /// `migrations` applied (none: the schema as it is, unchecked).
    private static func openWriter(
        path: String, durability: Durability, walCheckpointBytes: Int, migrations: [Migration]
    ) throws -> SQLiteConnection {
        let writer = try SQLiteConnection(path: path)
        let migrator = migrations.isEmpty ? nil : SQLiteMigrator(migrations: migrations)
        do {
            try migrator?.checkNotNewer(writer, path: path)
            try writer.execute("PRAGMA journal_mode = WAL")
            try writer.execute("PRAGMA synchronous = \(durability == .full ? "FULL" : "NORMAL")")
            try writer.execute("PRAGMA foreign_keys = ON")
            // After a checkpoint resets the WAL, SQLite truncates the file to this size.
            try writer.execute("PRAGMA journal_size_limit = \(walCheckpointBytes)")
            try migrator?.migrate(writer, path: path)
        } catch {
            writer.close()
            throw error
        }
        return writer
    }

    /// The size of the write-ahead log now, in bytes (0 when there is none).
    public var walBytes: Int { WALPolicy.size(of: path + "-wal") }

    /// Refuses new writes (``StoreError/closed``), lets queued ones commit, stops the writer thread
    /// and closes every connection (the pool's, the idle readers', the writer's last, so SQLite
    /// checkpoints the WAL and removes it). Returns once the writer thread has ended.
    public func close() async {
        await readerPool.close()
        let idle = idleReaders.withLock { readers in
            defer { readers = nil }
            return readers ?? []
        }
        for reader in idle { reader.connection.close() }
        queue.state.withLock { $0.closed = true }
        queue.wake.signal()
        // The loop commits what is queued, then ends; the thread closes the connection.
        await writerThread.shutdown()
    }

    /// The limits on pooled reads.
    public var readLimits: ReadLimits { readerPool.limits }

    /// Runs `body` in one read transaction under the read deadline: for every list, query, count
    /// or random pick. It first runs on the calling thread for at most ``ReadLimits/inlineSteps``,
    /// which most reads need a fraction of, sparing them two thread hand-offs; a read that needs
    /// more is interrupted there and runs again on a reader thread, so an event loop never spends
    /// more than that budget on one. See ``SQLiteReaderPool/read(_:)`` for what it throws.
    /// With `transaction` false (a read of one statement), no `BEGIN`/`COMMIT` is spent on it.
    /// With `inline` false (a read whose cost SQLite's steps do not measure, such as one with a
    /// regular expression), it goes straight to the reader threads.
    public func pooledRead<T: Sendable>(
        transaction: Bool = true, inline: Bool = true,
        _ body: @escaping @Sendable (SQLiteConnection) throws -> T
    ) async throws -> T {
        let steps = readerPool.limits.inlineSteps
        if inline, steps > 0,
            let result = try read({ connection in
                // The clock is a backstop for a regular expression, which SQLite does not count.
                let budget = ReadBudget(
                    timeout: Self.inlineTimeBackstop, checks: steps / Int(SQLiteConnection.progressSteps))
                return try SQLiteReaderPool.attempt(
                    body, on: connection, budget: budget, transaction: transaction)
            })
        {
            return result
        }
        return try await readerPool.read(transaction: transaction, body)
    }

    /// The most a read may first take on the calling thread whatever its steps. Steps bound it
    /// (a regular expression's progress checks count as steps); this clock is only a backstop,
    /// long enough that a loop thread preempted on a busy machine does not push a quick read to
    /// the reader threads.
    static let inlineTimeBackstop: Duration = .milliseconds(50)

    /// Pooled reads waiting for a thread.
    var waitingReads: Int { readerPool.waiting }

    /// Reads running on a reader thread now.
    var runningReads: Int { readerPool.running }

    /// Reads the reader threads have taken so far (reads that finished inline are not counted).
    var readsOnReaderThreads: Int { readerPool.taken }

    /// Stops the reader threads once their reads finish.
    public func closeReaders() async {
        await readerPool.close()
    }

    /// Runs `body` with a reader connection on the calling thread: only for bounded point lookups.
    public func read<T>(_ body: (SQLiteConnection) throws -> T) throws -> T {
        let idle = try idleReaders.withLock { readers in
            guard readers != nil else { throw StoreError.closed }
            return readers?.popLast()
        }
        let connection = try idle?.connection ?? SQLiteConnection(path: path, readOnly: true)
        defer {
            let returned = IdleReader(connection: connection)
            let kept = idleReaders.withLock { readers in
                guard readers != nil, readers!.count < maximumIdleReaders else { return false }
                readers!.append(returned)
                return true
            }
            if !kept { connection.close() }
        }
        return try body(connection)
    }

    /// Runs `body` in the writer's transaction and returns once that transaction has committed.
    public func write<T: Sendable>(_ body: @escaping @Sendable (SQLiteConnection) throws -> T) async throws
        -> T
    {
        try await withCheckedThrowingContinuation { continuation in
            let job = WriteJob(body: body, continuation: continuation)
            let accepted = queue.state.withLock { state in
                guard !state.closed else { return false }
                state.jobs.append(job)
                return true
            }
            if accepted {
                queue.wake.signal()
            } else {
                continuation.resume(throwing: StoreError.closed)
            }
        }
    }

    /// Calls `observer` on the writer thread after every commit; it must return at once.
    public func observeCommits(_ observer: @escaping @Sendable () -> Void) {
        commitObservers.add(observer)
    }

    /// Commits what is queued, in batches, until ``close()`` and nothing is left.
    private static func writerLoop(
        writer: SQLiteConnection, queue: WriteQueue, wal: WALPolicy, observers: CommitObservers
    ) {
        var closing = false
        while !closing {
            queue.wake.wait()
            while true {
                // Take everything queued; swapping the array out keeps the lock short.
                let waiting: [any PendingWrite] = queue.state.withLock { state in
                    var taken: [any PendingWrite] = []
                    swap(&taken, &state.jobs)
                    if taken.isEmpty { closing = state.closed }
                    return taken
                }
                if waiting.isEmpty { break }
                var start = 0
                while start < waiting.count {
                    let end = min(start + maximumBatch, waiting.count)
                    if commit(waiting[start..<end], on: writer) { observers.notify() }
                    wal.checkpointIfNeeded(writer)
                    start = end
                }
            }
        }
    }

    /// Runs a batch in one transaction; true when it committed. The transaction's own statements
    /// are prepared once (`run`), not parsed again for every batch as `execute` would.
    private static func commit(_ batch: ArraySlice<any PendingWrite>, on writer: SQLiteConnection) -> Bool {
        do {
            try writer.run("BEGIN IMMEDIATE")
        } catch {
            for job in batch { job.complete(commitError: error) }
            return false
        }
        for job in batch {
            do {
                try writer.run("SAVEPOINT roost_write")
                // A job that threw keeps none of its statements; the others of the batch stay.
                let succeeded = job.run(on: writer)
                // SQLITE_FULL or an I/O error may roll the whole transaction back: nothing of the
                // batch is stored, and a SAVEPOINT for the next job would open (and commit) a
                // transaction of its own while the batch reports failure.
                guard writer.isInTransaction else {
                    let error = writer.lastFailure ?? SQLiteError(code: 4, message: "transaction rolled back")
                    for job in batch { job.complete(commitError: error) }
                    return false
                }
                guard succeeded else { throw JobFailed() }
                try writer.run("RELEASE roost_write")
            } catch {
                try? writer.execute("ROLLBACK TO roost_write; RELEASE roost_write")
            }
        }
        do {
            try writer.run("COMMIT")
            for job in batch { job.complete(commitError: nil) }
            return true
        } catch {
            try? writer.execute("ROLLBACK")
            for job in batch { job.complete(commitError: error) }
            return false
        }
    }
}

/// Who is told of commits; registered once at start, read by the writer after each commit.
private final class CommitObservers: Sendable {
    private let observers = Mutex<[@Sendable () -> Void]>([])

    func add(_ observer: @escaping @Sendable () -> Void) {
        observers.withLock { $0.append(observer) }
    }

    func notify() {
        for observer in observers.withLock({ $0 }) { observer() }
    }
}

/// A job threw; its own error goes to its caller, this only unwinds its savepoint.
private struct JobFailed: Error {}
