import CRoostSystem
import CSQLite
import Foundation
import RoostStore

/// A failure reported by SQLite. Its description holds SQLite's message but never bound values.
public struct SQLiteError: Error, Sendable, CustomStringConvertible {
    /// SQLite's primary or extended result code.
    public let code: Int32
    public let message: String
    /// The operating system's `errno` behind an I/O error (`sqlite3_system_errno`), else 0.
    public var systemErrno: Int32 = 0

    /// Whether a UNIQUE or PRIMARY KEY constraint failed.
    public var isUniqueViolation: Bool {
        code == roost_sqlite_constraint_unique() || code == roost_sqlite_constraint_primarykey()
    }

    public var description: String { "SQLite error \(code): \(message)" }
}

/// One SQLite connection with a cache of prepared statements.
///
/// Not thread-safe, and not `Sendable`: its owner (the writer thread, a reader thread, the idle
/// readers of ``SQLiteDatabase``) lends it to one closure at a time, which cannot keep it.
public final class SQLiteConnection {
    private var handle: OpaquePointer?
    private var statements: [String: OpaquePointer] = [:]
    /// The budget of the read running now; set and cleared by the reader pool on the connection's
    /// thread, and read by the progress handler and the regex function on that same thread.
    var budget: ReadBudget?

    /// Opens (creating if needed) the database at `path`.
    public init(path: String, readOnly: Bool = false) throws {
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE
        let status = sqlite3_open_v2(path, &handle, flags, nil)
        guard status == SQLITE_OK else {
            let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            // deinit still runs after this throw and closes the handle; closing here too would be twice.
            throw SQLiteError(code: status, message: "cannot open \(path): \(message)")
        }
        sqlite3_extended_result_codes(handle, 1)
        sqlite3_busy_timeout(handle, 5000)
        SQLiteFunctions.register(on: handle, connection: self)
        // Every few thousand VM steps, a read whose budget ran out stops with SQLITE_INTERRUPT.
        sqlite3_progress_handler(
            handle, Self.progressSteps,
            { context in
                guard let context else { return 0 }
                let connection = Unmanaged<SQLiteConnection>.fromOpaque(context).takeUnretainedValue()
                return connection.budgetIsSpent() ? 1 : 0
            }, Unmanaged.passUnretained(self).toOpaque())
        if readOnly { try execute("PRAGMA query_only = ON") }
    }

    /// Whether the running read must stop (past its deadline, or its caller gone). A read that
    /// turns slow lowers its thread's priority here, so it yields the CPU to the event loops.
    func budgetIsSpent() -> Bool {
        guard let budget else { return false }
        return budget.check { _ = roost_set_thread_nice(ReadLimits.slowReadNice) }
    }

    /// VM steps between budget checks: a check costs a clock read, a step a few nanoseconds.
    static let progressSteps: Int32 = 2000

    deinit { close() }

    /// Finalizes the cached statements and closes the handle; later calls fail with SQLITE_MISUSE.
    /// The last connection to a WAL database to close checkpoints it and removes `-wal` and `-shm`.
    public func close() {
        for statement in statements.values { sqlite3_finalize(statement) }
        statements.removeAll()
        guard let open = handle else { return }
        handle = nil
        sqlite3_close_v2(open)
    }

    /// The raw handle, for SQLite's backup API within this module.
    var rawHandle: OpaquePointer? { handle }

    /// Whether a transaction is open (SQLite may end one itself after SQLITE_FULL or an I/O error).
    public var isInTransaction: Bool { sqlite3_get_autocommit(handle) == 0 }

    /// The last error a statement on this connection failed with.
    public private(set) var lastFailure: SQLiteError?

    /// Runs one or more statements that take no parameters.
    public func execute(_ sql: String) throws {
        var errorMessage: UnsafeMutablePointer<CChar>?
        let status = sqlite3_exec(handle, sql, nil, nil, &errorMessage)
        if status != SQLITE_OK {
            let message = errorMessage.map { String(cString: $0) } ?? "unknown error"
            sqlite3_free(errorMessage)
            let error = SQLiteError(code: status, message: message, systemErrno: sqlite3_system_errno(handle))
            lastFailure = error
            throw error
        }
    }

    /// Runs a statement and returns nothing; for INSERT, UPDATE, DELETE.
    @discardableResult
    public func run(_ sql: SQL) throws -> Int {
        try withStatement(sql) { statement in
            let status = sqlite3_step(statement)
            guard status == SQLITE_DONE || status == SQLITE_ROW else { throw self.error(status) }
            return Int(sqlite3_changes(self.handle))
        }
    }

    /// Runs a query and maps each row.
    public func query<T>(_ sql: SQL, _ map: (Row) throws -> T) throws -> [T] {
        try withStatement(sql) { statement in
            var results: [T] = []
            while true {
                let status = sqlite3_step(statement)
                if status == SQLITE_DONE { return results }
                guard status == SQLITE_ROW else { throw self.error(status) }
                results.append(try map(Row(statement: statement)))
            }
        }
    }

    /// The first row of a query, mapped, or nil.
    public func first<T>(_ sql: SQL, _ map: (Row) throws -> T) throws -> T? {
        try withStatement(sql) { statement in
            let status = sqlite3_step(statement)
            if status == SQLITE_DONE { return nil }
            guard status == SQLITE_ROW else { throw self.error(status) }
            return try map(Row(statement: statement))
        }
    }

    private func withStatement<T>(_ sql: SQL, _ body: (OpaquePointer) throws -> T) throws -> T {
        let statement = try prepared(sql.text)
        defer {
            sqlite3_reset(statement)
            sqlite3_clear_bindings(statement)
        }
        for (offset, argument) in sql.arguments.enumerated() {
            let index = Int32(offset + 1)
            let status: Int32
            switch argument {
            case .null: status = sqlite3_bind_null(statement, index)
            case .integer(let value): status = sqlite3_bind_int64(statement, index, value)
            case .real(let value): status = sqlite3_bind_double(statement, index, value)
            case .text(let value):
                status = sqlite3_bind_text(statement, index, value, -1, roost_sqlite_transient())
            case .blob(let value):
                status = value.withUnsafeBytes {
                    sqlite3_bind_blob(
                        statement, index, $0.baseAddress, Int32($0.count), roost_sqlite_transient())
                }
            }
            guard status == SQLITE_OK else { throw error(status) }
        }
        return try body(statement)
    }

    private func prepared(_ text: String) throws -> OpaquePointer {
        if let cached = statements[text] { return cached }
        var statement: OpaquePointer?
        let status = sqlite3_prepare_v3(handle, text, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil)
        guard status == SQLITE_OK, let statement else { throw error(status) }
        if statements.count > 256 {
            for old in statements.values { sqlite3_finalize(old) }
            statements.removeAll()
        }
        statements[text] = statement
        return statement
    }

    private func error(_ status: Int32) -> SQLiteError {
        let error = SQLiteError(
            code: sqlite3_extended_errcode(handle), message: String(cString: sqlite3_errmsg(handle)),
            systemErrno: sqlite3_system_errno(handle))
        lastFailure = error
        return error
    }
}

/// A result row, valid only inside the mapping closure.
public struct Row {
    let statement: OpaquePointer

    /// The column as an integer; 0 for NULL.
    public func integer(_ column: Int32) -> Int64 { sqlite3_column_int64(statement, column) }

    /// The column as text, or nil for NULL.
    public func text(_ column: Int32) -> String? {
        guard sqlite3_column_type(statement, column) != SQLITE_NULL,
            let bytes = sqlite3_column_text(statement, column)
        else { return nil }
        return String(cString: bytes)
    }

    /// The column's bytes (text or blob) without decoding them.
    public func bytes(_ column: Int32) -> [UInt8] {
        guard let pointer = sqlite3_column_blob(statement, column) else { return [] }
        let count = Int(sqlite3_column_bytes(statement, column))
        return Array(UnsafeRawBufferPointer(start: pointer, count: count))
    }

    /// Whether the column is NULL.
    public func isNull(_ column: Int32) -> Bool { sqlite3_column_type(statement, column) == SQLITE_NULL }
}
