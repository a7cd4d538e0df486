import Dispatch
import Foundation
import RoostStore
import Synchronization

/// A few PostgreSQL connections for callers that may block their thread: the blob store's
/// methods, which run on dedicated I/O threads (never an event loop, never Swift's cooperative
/// threads). A caller borrows a connection for one transaction, on its own thread; at most
/// `limit` exist, and a caller beyond that waits for one to come back.
///
/// A connection found dead is replaced; while the server cannot be reached, borrowing fails at
/// once with ``StoreError/unavailable`` until the pool's backoff lets one thread try again. A
/// connection idle for `idleConnectionTimeout` is closed, as the pool's are, so that a quiet
/// instance holds none of the server's connection slots.
final class BlockingPostgresConnections: Sendable {
    let configuration: PostgresConfiguration
    private let slots: DispatchSemaphore
    private let idle = Mutex<[LentConnection]>([])
    private let availability = PostgresPool.Availability()
    private let isClosed = Atomic<Bool>(false)

    init(configuration: PostgresConfiguration, limit: Int) {
        self.configuration = configuration
        slots = DispatchSemaphore(value: max(1, limit))
    }

    /// Runs `body` in one transaction on a borrowed connection: READ COMMITTED, or REPEATABLE
    /// READ, READ ONLY when `readOnly` (a blob's chunks read from one snapshot). Commits when
    /// `body` returns, rolls back when it throws. Blocks the calling thread.
    ///
    /// Throws ``StoreError/unavailable`` when the server cannot be reached or the connection
    /// dies, ``StoreError/timeout(after:)`` when `statement_timeout` stops a statement,
    /// ``StoreError/closed`` after ``close()``, and `body`'s own errors as they are.
    func transaction<T>(readOnly: Bool, _ body: (PostgresConnection) throws -> T) throws -> T {
        guard !isClosed.load(ordering: .acquiring) else { throw StoreError.closed }
        slots.wait()
        defer { slots.signal() }
        let begin = readOnly ? "BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY" : "BEGIN"
        var (connection, isFresh) = try borrow()
        do {
            try connection.execute(begin)
        } catch let error as PostgresError where error.isConnectionFailure && !isFresh {
            // Died while idle, before anything was sent: once more on a new connection.
            connection.close()
            (connection, isFresh) = (try connect(), true)
            do { try connection.execute(begin) } catch { throw translate(error, connection) }
        } catch {
            throw translate(error, connection)
        }
        do {
            let result = try body(connection)
            try connection.execute("COMMIT")
            giveBack(connection)
            return result
        } catch {
            if connection.isConnected { try? connection.execute("ROLLBACK") }
            let translated = translate(error, connection)
            if connection.isConnected { giveBack(connection) } else { connection.close() }
            throw translated
        }
    }

    /// Closes the idle connections; those lent out close when they come back.
    func close() {
        isClosed.store(true, ordering: .releasing)
        let connections = idle.withLock { idle in
            defer { idle = [] }
            return idle
        }
        for lent in connections { lent.connection.close() }
    }

    /// An idle connection that can take a job, moved to this thread, or a new one.
    private func borrow() throws -> (PostgresConnection, isFresh: Bool) {
        while let lent = idle.withLock({ $0.popLast() }) {
            let connection = lent.connection
            connection.moveToCurrentThread()
            if connection.isReady { return (connection, false) }
            connection.close()
        }
        return (try connect(), true)
    }

    private func connect() throws -> PostgresConnection {
        guard availability.mayConnect() else { throw StoreError.unavailable }
        do {
            let connection = try PostgresConnection(configuration: configuration)
            availability.connected()
            return connection
        } catch {
            availability.failed()
            throw StoreError.unavailable
        }
    }

    private func giveBack(_ connection: PostgresConnection) {
        guard !isClosed.load(ordering: .acquiring) else {
            connection.close()
            return
        }
        let timeout = configuration.idleConnectionTimeout
        idle.withLock { $0.append(LentConnection(connection: connection, idleSince: .now)) }
        DispatchQueue.global().asyncAfter(deadline: .now() + timeout.dispatchInterval) { [weak self] in
            self?.closeIdle(olderThan: timeout)
        }
    }

    /// Closes the connections idle for `timeout` or longer (nobody holds them: they are taken
    /// out of the list first).
    private func closeIdle(olderThan timeout: Duration) {
        let now = ContinuousClock.now
        let stale = idle.withLock { idle -> [LentConnection] in
            let stale = idle.filter { now - $0.idleSince >= timeout }
            idle.removeAll { now - $0.idleSince >= timeout }
            return stale
        }
        for lent in stale { lent.connection.close() }
    }

    /// Connections idle now (for tests).
    var idleCount: Int { idle.withLock { $0.count } }

    /// What the caller sees of a failure: the server gone, the statement deadline, or as it was.
    private func translate(_ error: any Error, _ connection: PostgresConnection) -> any Error {
        if let error = error as? PostgresError {
            if error.isConnectionFailure { return StoreError.unavailable }
            if error.isQueryCanceled { return StoreError.timeout(after: configuration.statementTimeout) }
            if error.isUnstorableText { return StoreError.unstorableText }
        }
        if !connection.isConnected { return StoreError.unavailable }
        return error
    }
}

/// A connection as it waits in the idle list.
// @unchecked Sendable: a connection is used by one thread at a time: it sits in the idle list
// (under its lock) or is borrowed by exactly one caller, which moves it to its own thread.
private final class LentConnection: @unchecked Sendable {
    let connection: PostgresConnection
    let idleSince: ContinuousClock.Instant
    init(connection: PostgresConnection, idleSince: ContinuousClock.Instant) {
        self.connection = connection
        self.idleSince = idleSince
    }
}
