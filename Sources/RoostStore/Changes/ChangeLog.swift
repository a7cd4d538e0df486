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

    public init(
        sequence: Int64, collection: String, guid: String, operation: Operation, version: Int64, at: Int64,
        document: [UInt8]? = nil, acl: [UInt8]? = nil, previousDocument: [UInt8]? = nil,
        previousACL: [UInt8]? = nil
    ) {
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

    /// 24 hours or 10,000 entries.
    public init(age: Duration = .seconds(24 * 3600), entries: Int = 10_000) {
        self.age = age
        // The newest entry always stays: it carries the last sequence number.
        self.entries = max(1, entries)
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
