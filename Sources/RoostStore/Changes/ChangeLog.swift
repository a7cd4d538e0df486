/// One entry of the change log: a write of one object (or a token's revocation), numbered in
/// commit order. Realtime streams are built from it, and resume from its sequence numbers.
public struct Change: Sendable, Equatable {
    /// What happened.
    public enum Operation: String, Sendable {
        case create, update, delete
        /// A token was deleted (logout, revocation, a password change, deactivation): streams
        /// opened with it end. `guid` is the token's id; never delivered as an event.
        case revoke
    }

    /// Increases with every entry, in commit order; gaps are allowed (PostgreSQL's sequences
    /// have them), so a client position is "everything up to here".
    public var sequence: Int64
    public var collection: String
    public var guid: String
    public var operation: Operation
    /// The object's version after the write (before it, for a delete).
    public var version: Int64
    /// Wall-clock milliseconds of the commit, for the retention window.
    public var at: Int64
    /// The object after the write (nil after a delete): document and access list.
    public var document: [UInt8]?
    public var acl: [UInt8]?
    /// The object before the write (nil for a create): who could read it then, and whether it
    /// matched a query then, decide `leave` and who hears of a delete.
    public var previousDocument: [UInt8]?
    public var previousACL: [UInt8]?
    /// Who deleted the object (a create's or update's author is the document's `updatedBy`);
    /// nil when no user did (an administrator's command, a cascade) or not recorded.
    public var deletedBy: String?

    public init(
        sequence: Int64, collection: String, guid: String, operation: Operation, version: Int64, at: Int64,
        document: [UInt8]? = nil, acl: [UInt8]? = nil, previousDocument: [UInt8]? = nil,
        previousACL: [UInt8]? = nil, deletedBy: String? = nil
    ) {
        self.deletedBy = deletedBy
        self.sequence = sequence
        self.collection = collection
        self.guid = guid
        self.operation = operation
        self.version = version
        self.at = at
        self.document = document
        self.acl = acl
        self.previousDocument = previousDocument
        self.previousACL = previousACL
    }
}

/// Which positions the log can still replay: everything after `trimmedThrough`, up to `last`.
public struct ChangeWindow: Sendable, Equatable {
    /// The highest sequence number trimmed away (0 when nothing was).
    public var trimmedThrough: Int64
    /// The highest sequence number written (0 before the first write).
    public var last: Int64

    public init(trimmedThrough: Int64, last: Int64) {
        self.trimmedThrough = trimmedThrough
        self.last = last
    }

    /// Whether a client that has seen everything up to `position` can be brought up to date
    /// from the log: not when entries after it were trimmed, nor when it names a position this
    /// log never reached (a restored backup, another server).
    public func canResume(after position: Int64) -> Bool {
        position >= trimmedThrough && position <= last
    }
}

/// How long the change log keeps entries: those younger than `age` and the newest `entries`,
/// whichever keeps more.
public struct ChangeRetention: Sendable, Equatable {
    public var age: Duration
    public var entries: Int

    /// While ASYNC script handlers are defined, entries they have not been dispatched to stay
    /// beyond the window, but at most this much longer: older than `age + undispatchedAge`, or
    /// more than `entries + undispatchedEntries` from the end, they go (whichever comes first),
    /// so a stuck handler cannot grow the log without end. The events it loses are recorded as
    /// failed runs ("trimmed").
    public var undispatchedAge: Duration
    public var undispatchedEntries: Int

    /// 24 hours or 10,000 entries; undispatched entries 7 days or 1,000,000 entries more.
    public init(
        age: Duration = .seconds(24 * 3600), entries: Int = 10_000,
        undispatchedAge: Duration = .seconds(7 * 24 * 3600), undispatchedEntries: Int = 1_000_000
    ) {
        self.age = age
        // The newest entry always stays: it carries the last sequence number.
        self.entries = max(1, entries)
        self.undispatchedAge = undispatchedAge
        self.undispatchedEntries = max(0, undispatchedEntries)
    }
}

/// The change log every object write appends to in its own transaction. SQLite implements it
/// now; a PostgreSQL store implements the same meaning (a sequence, the log written by the same
/// transaction, `LISTEN/NOTIFY` as the commit hint and polling as its fallback).
public protocol ChangeLog: Sendable {
    /// Entries after `sequence`, ascending, at most `limit`, and no more once their documents
    /// add up to `maxBytes` (the first always comes, however big).
    func changes(after sequence: Int64, limit: Int, maxBytes: Int) async throws -> [Change]

    /// What the log can replay now.
    func window() async throws -> ChangeWindow

    /// Removes at most `batch` entries outside `retention` (the oldest first); returns how many.
    func trim(_ retention: ChangeRetention, now: Int64, batch: Int) async throws -> Int

    /// Calls `observer` after every commit that may have appended entries, from any thread; it
    /// must return at once. A hint only: readers still read the log for what is new.
    func observeCommits(_ observer: @escaping @Sendable () -> Void)
}

/// Reads change-log rows up to a byte budget, in every driver alike.
public struct ChangeReader {
    /// The columns a read selects, in the order ``take(_:)`` reads them.
    public static let columns =
        "seq, collection, guid, operation, version, at, document, acl, previous_document, previous_acl, actor"
    /// How many columns ``columns`` names: a query selecting more reads them from here on.
    public static let columnCount = 11

    private var budget: Int

    /// A read that stops once the documents add up to `maxBytes` (the first always comes).
    public init(maxBytes: Int) {
        budget = maxBytes
    }

    /// The row's change; nil once the budget is spent, without reading the row's documents.
    public mutating func take(_ row: some DatabaseRow) -> Change? {
        guard budget > 0 else { return nil }
        let change = Change(
            sequence: row.integer(0), collection: row.text(1) ?? "", guid: row.text(2) ?? "",
            operation: Change.Operation(rawValue: row.text(3) ?? "") ?? .update,
            version: row.integer(4), at: row.integer(5),
            document: row.isNull(6) ? nil : row.bytes(6), acl: row.isNull(7) ? nil : row.bytes(7),
            previousDocument: row.isNull(8) ? nil : row.bytes(8),
            previousACL: row.isNull(9) ? nil : row.bytes(9), deletedBy: row.text(10))
        budget -= Self.cost(of: change)
        return change
    }

    /// What a change counts against the budget: a batch whose changes add up to `maxBytes` may
    /// have stopped short of the log's end.
    public static func cost(of change: Change) -> Int {
        (change.document?.count ?? 0) + (change.previousDocument?.count ?? 0) + 64
    }
}

extension ChangeRetention {
    /// The last sequence number a trim may delete, given the oldest entries beyond the newest
    /// `entries` (sequence and time, ascending): the run of them older than the age. Nil when
    /// none may go.
    public func trimBoundary(oldest: [(sequence: Int64, at: Int64)], now: Int64) -> Int64? {
        let cutoff = now - Int64(age.components.seconds) * 1000
        return oldest.prefix(while: { $0.at < cutoff }).last?.sequence
    }

    /// The last sequence number a trim must delete even when ASYNC handlers have not been
    /// dispatched to it: the run of `oldest` (as for ``trimBoundary(oldest:now:)``, with `last`
    /// the newest sequence) past the hard cap on undispatched entries. Nil when none must go.
    public func forcedBoundary(oldest: [(sequence: Int64, at: Int64)], last: Int64, now: Int64) -> Int64? {
        let cutoff = now - Int64(age.components.seconds) * 1000
        let hardCutoff = cutoff - Int64(undispatchedAge.components.seconds) * 1000
        let hardEntries = last - Int64(entries) - Int64(undispatchedEntries)
        return oldest.prefix(while: { $0.at < cutoff && ($0.at < hardCutoff || $0.sequence <= hardEntries) })
            .last?.sequence
    }
}
