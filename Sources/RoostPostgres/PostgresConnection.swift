import CLibPQ
import Dispatch
import Foundation
import RoostStore

/// One libpq connection, used only on the thread that opened it (a pool thread, or the thread
/// that migrates at startup), inside read/write bodies.
///
/// Statements use the extended protocol with every value bound (binary, with its type OID).
/// A statement text seen twice is prepared, and later runs skip parsing and planning.
public final class PostgresConnection {
    private var handle: OpaquePointer?
    private var owner: pthread_t
    let configuration: PostgresConfiguration
    /// Sends PQcancel for this connection's running statement from another thread.
    let cancelHandle: PostgresCancelHandle
    /// Prepared statements by text and parameter types, with their names.
    private var prepared: [String: String] = [:]
    /// Statement keys run once, not prepared yet.
    private var seenOnce: Set<String> = []
    /// Texts with `?` already numbered `$1…$n`.
    private var numbered: [String: String] = [:]

    /// Prepared statements kept at most; past it they are all deallocated and the cache restarts.
    static let maximumPrepared = 128

    /// Connects (blocking) and sets `statement_timeout` for the session.
    init(configuration: PostgresConfiguration) throws {
        self.configuration = configuration
        owner = pthread_self()
        let connection = PQconnectdb(configuration.libpqConnectionString)
        guard let connection, PQstatus(connection) == CONNECTION_OK else {
            let message = connection.map { String(cString: PQerrorMessage($0)) } ?? "out of memory"
            PQfinish(connection)
            throw PostgresError(
                message: "cannot connect to \(configuration.redacted): "
                    + configuration.scrubbed(message.trimmingSpaces),
                isConnectionFailure: true)
        }
        handle = connection
        roost_pq_silence_notices(connection)
        guard let cancel = PQgetCancel(connection) else {
            PQfinish(connection)
            throw PostgresError(message: "libpq could not make a cancel request", isConnectionFailure: true)
        }
        cancelHandle = PostgresCancelHandle(cancel)
        try execute("SET statement_timeout = \(configuration.statementTimeoutMilliseconds)")
    }

    deinit { close() }

    /// Hands an idle connection to the calling thread, which alone uses it from now on (the blob
    /// store lends its few connections to whichever I/O thread needs one, one thread at a time).
    func moveToCurrentThread() {
        owner = pthread_self()
    }

    /// Closes the connection; later statements fail as a lost connection.
    func close() {
        guard let open = handle else { return }
        handle = nil
        PQfinish(open)
    }

    /// Whether an idle connection can take a job without a round trip: open, outside any
    /// transaction, and nothing arrived on its socket (a closed socket or the server's
    /// termination notice would).
    var isReady: Bool {
        assertOwned()
        guard let handle, PQstatus(handle) == CONNECTION_OK, PQtransactionStatus(handle) == PQTRANS_IDLE
        else { return false }
        return roost_pq_socket_readable(handle) == 0
    }

    /// Whether the connection is still up (after a failed statement).
    var isConnected: Bool { handle.map { PQstatus($0) == CONNECTION_OK } ?? false }

    /// Whether a transaction is open or failed on this connection.
    var isInTransaction: Bool {
        guard let handle else { return false }
        let status = PQtransactionStatus(handle)
        return status == PQTRANS_INTRANS || status == PQTRANS_INERROR
    }

    /// Rows of a query, each mapped by `row`.
    public func query<T>(_ sql: SQL, _ row: (PostgresRow) throws -> T) throws -> [T] {
        let result = try perform(sql)
        defer { PQclear(result) }
        let count = PQntuples(result)
        var rows: [T] = []
        rows.reserveCapacity(Int(count))
        for index in 0..<count { rows.append(try row(PostgresRow(result: result, row: index))) }
        return rows
    }

    /// The first row of a query, mapped, or nil.
    public func first<T>(_ sql: SQL, _ row: (PostgresRow) throws -> T) throws -> T? {
        let result = try perform(sql)
        defer { PQclear(result) }
        guard PQntuples(result) > 0 else { return nil }
        return try row(PostgresRow(result: result, row: 0))
    }

    /// The first row of a query with its columns in binary form (a bytea as its raw bytes, read
    /// with ``PostgresRow/withBinaryValue(_:_:)``), or nil: half the bytes of bytea's hex text.
    func firstBinary<T>(_ sql: SQL, _ row: (PostgresRow) throws -> T) throws -> T? {
        let result = try perform(sql, binaryResults: true)
        defer { PQclear(result) }
        guard PQntuples(result) > 0 else { return nil }
        return try row(PostgresRow(result: result, row: 0))
    }

    /// Runs a statement; the number of rows it changed.
    @discardableResult
    public func run(_ sql: SQL) throws -> Int {
        let result = try perform(sql)
        defer { PQclear(result) }
        return Int(String(cString: PQcmdTuples(result))) ?? 0
    }

    /// Runs text with no parameters, several statements allowed (DDL, migrations).
    public func execute(_ text: String) throws {
        let connection = try open()
        PQclear(try check(PQexec(connection, text)))
    }

    private func open() throws -> OpaquePointer {
        assertOwned()
        guard let handle else {
            throw PostgresError(message: "the connection is closed", isConnectionFailure: true)
        }
        return handle
    }

    private func assertOwned() {
        precondition(
            pthread_equal(owner, pthread_self()) != 0,
            "a PostgresConnection is used only on the thread that opened it")
    }

    /// Runs `sql` with its values bound; the result, which the caller clears.
    private func perform(_ sql: SQL, binaryResults: Bool = false) throws -> OpaquePointer {
        let connection = try open()
        let parameters = BoundParameters(sql.arguments)
        let text = try numberedText(sql.text, count: sql.arguments.count)
        let key =
            parameters.types.isEmpty
            ? text : text + "\u{0}" + parameters.types.map(String.init).joined(separator: ",")
        let name = try preparedName(for: key, text: text, types: parameters.types, on: connection)
        let result = parameters.withPointers { values, lengths, formats in
            if let name {
                return PQexecPrepared(
                    connection, name, Int32(parameters.count), values, lengths, formats, binaryResults ? 1 : 0
                )
            }
            return parameters.types.withUnsafeBufferPointer { types in
                PQexecParams(
                    connection, text, Int32(parameters.count), types.baseAddress, values, lengths, formats,
                    binaryResults ? 1 : 0)
            }
        }
        return try check(result)
    }

    /// The name of the prepared statement for `key`, preparing it on its second use; nil to run
    /// it unprepared.
    private func preparedName(for key: String, text: String, types: [Oid], on connection: OpaquePointer)
        throws
        -> String?
    {
        if let name = prepared[key] { return name }
        guard configuration.preparesStatements else { return nil }
        guard seenOnce.remove(key) != nil else {
            if seenOnce.count >= Self.maximumPrepared * 8 { seenOnce.removeAll() }
            seenOnce.insert(key)
            return nil
        }
        if prepared.count >= Self.maximumPrepared {
            try execute("DEALLOCATE ALL")
            prepared.removeAll()
        }
        let name = "roost_\(prepared.count)"
        let result = types.withUnsafeBufferPointer {
            PQprepare(connection, name, text, Int32(types.count), $0.baseAddress)
        }
        PQclear(try check(result))
        prepared[key] = name
        return name
    }

    /// `text` with each `?` outside quotes numbered `$1…$n`; throws when the count is not `count`.
    private func numberedText(_ text: String, count: Int) throws -> String {
        if let cached = numbered[text] { return cached }
        let (result, placeholders) = Self.numberingPlaceholders(text)
        guard placeholders == count else {
            throw PostgresError(
                message: "the statement has \(placeholders) placeholders but \(count) values are bound")
        }
        if numbered.count >= Self.maximumPrepared * 8 { numbered.removeAll() }
        numbered[text] = result
        return result
    }

    /// Replaces each `?` that is not inside '…', "…" or a `--` comment by `$1`, `$2`, …
    static func numberingPlaceholders(_ text: String) -> (text: String, count: Int) {
        var output: [UInt8] = []
        output.reserveCapacity(text.utf8.count + 8)
        var count = 0
        var quote: UInt8? = nil
        var inComment = false
        var previous: UInt8 = 0
        for byte in text.utf8 {
            defer { previous = byte }
            if inComment {
                if byte == UInt8(ascii: "\n") { inComment = false }
            } else if let open = quote {
                if byte == open { quote = nil }
            } else if byte == UInt8(ascii: "'") || byte == UInt8(ascii: "\"") {
                quote = byte
            } else if byte == UInt8(ascii: "-"), previous == UInt8(ascii: "-") {
                inComment = true
            } else if byte == UInt8(ascii: "?") {
                count += 1
                output.append(UInt8(ascii: "$"))
                output.append(contentsOf: String(count).utf8)
                continue
            }
            output.append(byte)
        }
        return (String(decoding: output, as: UTF8.self), count)
    }

    /// `result` when it succeeded; otherwise clears it and throws its error.
    private func check(_ result: OpaquePointer?) throws -> OpaquePointer {
        guard let result else { throw failure(nil) }
        let status = PQresultStatus(result)
        guard status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK else {
            let error = failure(result)
            PQclear(result)
            throw error
        }
        return result
    }

    private func failure(_ result: OpaquePointer?) -> PostgresError {
        let field = { (code: Int32) -> String? in
            guard let result, let value = PQresultErrorField(result, code) else { return nil }
            return String(cString: value)
        }
        let sqlState = field(roost_pq_diag_sqlstate())
        let message =
            field(roost_pq_diag_message_primary())
            ?? handle.map { String(cString: PQerrorMessage($0)).trimmingSpaces } ?? "the connection is closed"
        return PostgresError(
            sqlState: sqlState, message: configuration.scrubbed(message), isConnectionFailure: !isConnected)
    }
}

/// Values bound in binary form, each with its type OID; NULL is sent untyped so PostgreSQL
/// takes the column's type.
private struct BoundParameters {
    var types: [Oid] = []
    private var bytes: [UInt8] = []
    /// Offset and length in `bytes` per value; nil for NULL.
    private var spans: [(offset: Int, length: Int)?] = []

    var count: Int { types.count }

    init(_ values: [DatabaseValue]) {
        for value in values {
            switch value {
            case .null:
                types.append(0)
                spans.append(nil)
            case .integer(let number):
                append(PostgresType.int8, withUnsafeBytes(of: number.bigEndian) { Array($0) })
            case .real(let number):
                append(PostgresType.float8, withUnsafeBytes(of: number.bitPattern.bigEndian) { Array($0) })
            case .text(let text):
                append(PostgresType.text, Array(text.utf8))
            case .blob(let blob):
                append(PostgresType.bytea, blob)
            }
        }
    }

    private mutating func append(_ type: Oid, _ value: [UInt8]) {
        types.append(type)
        spans.append((bytes.count, value.count))
        bytes += value
    }

    func withPointers<R>(
        _ body: (
            UnsafePointer<UnsafePointer<CChar>?>?, UnsafePointer<Int32>?, UnsafePointer<Int32>?
        ) -> R
    ) -> R {
        // One byte more than needed, so even an empty buffer has an address.
        (bytes + [0]).withUnsafeBufferPointer { buffer in
            let base = UnsafeRawPointer(buffer.baseAddress!)
            let values: [UnsafePointer<CChar>?] = spans.map { span in
                span.map { (base + $0.offset).assumingMemoryBound(to: CChar.self) }
            }
            let lengths = spans.map { Int32($0?.length ?? 0) }
            let formats = [Int32](repeating: 1, count: spans.count)
            return values.withUnsafeBufferPointer { values in
                lengths.withUnsafeBufferPointer { lengths in
                    formats.withUnsafeBufferPointer { formats in
                        body(values.baseAddress, lengths.baseAddress, formats.baseAddress)
                    }
                }
            }
        }
    }
}

/// A connection's cancel request, which any thread may send. A send in flight is awaited
/// before the connection runs another job, so a late cancel never stops the next statement.
final class PostgresCancelHandle: @unchecked Sendable {
    // @unchecked Sendable: PQcancel is made to be called from another thread, and sends are
    // serialised by `sending`.
    private let cancel: OpaquePointer
    private let sending = DispatchGroup()
    private let lock = NSLock()

    init(_ cancel: OpaquePointer) { self.cancel = cancel }

    deinit { PQfreeCancel(cancel) }

    /// Asks the server to stop the statement running now; returns at once (the request is sent
    /// on another thread, as it opens a connection of its own).
    func send() {
        sending.enter()
        DispatchQueue.global().async { [self] in
            lock.withLock {
                var message = [CChar](repeating: 0, count: 256)
                _ = PQcancel(cancel, &message, Int32(message.count))
            }
            sending.leave()
        }
    }

    /// Waits until no cancel request is being sent.
    func waitForSends() { sending.wait() }
}
