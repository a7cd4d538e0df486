import RoostQuery

/// One stored object: its JSON document (metadata included) and the metadata as columns.
public struct StoredObject: Sendable, Equatable {
    public var collection: String
    public var guid: String
    /// The object's JSON text exactly as it is served, metadata included.
    public var document: [UInt8]
    public var createdBy: String?
    /// Milliseconds since 1970.
    public var createdAt: Int64
    public var updatedBy: String?
    /// Milliseconds since 1970.
    public var updatedAt: Int64
    /// 1 on create, +1 on each change.
    public var version: Int64
    /// The object's access list as JSON (`{readUsers, readGroups, writeUsers, writeGroups}`), kept
    /// out of the document; nil when the collection's rules alone apply.
    public var acl: [UInt8]?

    public init(
        collection: String, guid: String, document: [UInt8], createdBy: String?, createdAt: Int64,
        updatedBy: String?, updatedAt: Int64, version: Int64, acl: [UInt8]? = nil
    ) {
        self.acl = acl
        self.collection = collection
        self.guid = guid
        self.document = document
        self.createdBy = createdBy
        self.createdAt = createdAt
        self.updatedBy = updatedBy
        self.updatedAt = updatedAt
        self.version = version
    }
}

/// One key of a sort order.
public struct SortKey: Sendable, Equatable {
    public var field: FieldPath
    public var descending: Bool

    public init(field: FieldPath, descending: Bool) {
        self.field = field
        self.descending = descending
    }
}

/// A page of a collection.
public struct ListRequest: Sendable {
    public var collection: String
    /// Only objects matching this; nil for all.
    public var filter: QueryExpression?
    /// What the caller may see, from the access rules; and-ed with `filter`. Unlike the filter,
    /// its dotted paths never look through references, and `ffACL.*` reads the object's access list.
    public var restriction: QueryExpression?
    /// What the caller may see of referenced objects when the filter reads through references;
    /// nil keeps every dotted path inside the object itself.
    public var references: ReferenceAccess?
    /// Empty means creation order.
    public var sort: [SortKey]
    public var start: Int
    public var count: Int
    /// Whether to count all matches too; off by default because counting costs a scan.
    public var includeTotal: Bool

    public init(
        collection: String, filter: QueryExpression? = nil, restriction: QueryExpression? = nil,
        sort: [SortKey] = [], start: Int = 0, count: Int = 100, includeTotal: Bool = false
    ) {
        self.collection = collection
        self.filter = filter
        self.restriction = restriction
        self.sort = sort
        self.start = start
        self.count = count
        self.includeTotal = includeTotal
    }
}

/// The documents of one page, and the total when it was asked for.
public struct ListPage: Sendable {
    public var documents: [[UInt8]]
    public var total: Int?

    public init(documents: [[UInt8]], total: Int?) {
        self.documents = documents
        self.total = total
    }
}

/// A failure the store reports to the layer above, which decides what users see.
public struct StoreError: Error, Sendable, Equatable {
    public enum Kind: Sendable, Equatable {
        /// An object with this guid already exists in the collection.
        case duplicate
        /// No object with this guid exists in the collection.
        case notFound
        /// The object is no longer at the version the write expected: another write came first.
        case versionChanged
        /// A file operation failed; the text is for the server's log only.
        case io(String)
        /// A read ran past its deadline (the duration) and was interrupted.
        case timeout(Duration)
        /// Too many reads are waiting for a reader thread.
        case busy
        /// The store is shutting down.
        case closed
        /// The database server cannot be reached now (the store reconnects meanwhile).
        case unavailable
        /// The object would keep more rows beside it than one write may insert (see
        /// ``DerivedRows/Limit``); refused before the write.
        case tooManyDerivedRows(DerivedRows.Limit)
        /// A text value holds a character the database cannot store or compare (U+0000 on
        /// PostgreSQL); nothing was written.
        case unstorableText
    }

    public let kind: Kind

    public static let duplicate = StoreError(kind: .duplicate)
    public static let notFound = StoreError(kind: .notFound)
    /// A read ran past its deadline.
    public static func timeout(after limit: Duration) -> StoreError { StoreError(kind: .timeout(limit)) }
    /// Too many reads are waiting.
    public static let busy = StoreError(kind: .busy)
    /// The store is shutting down.
    public static let closed = StoreError(kind: .closed)
    /// The database server cannot be reached now.
    public static let unavailable = StoreError(kind: .unavailable)
    public static let versionChanged = StoreError(kind: .versionChanged)
    /// A text value holds a character the database cannot store.
    public static let unstorableText = StoreError(kind: .unstorableText)
    /// An object would keep more rows beside it than a write may insert.
    public static func tooManyRows(_ limit: DerivedRows.Limit) -> StoreError {
        StoreError(kind: .tooManyDerivedRows(limit))
    }
    /// A file operation failed.
    public static func io(_ detail: String) -> StoreError { StoreError(kind: .io(detail)) }

    /// Lets `catch StoreError.duplicate` match.
    public static func ~= (pattern: StoreError, error: any Error) -> Bool {
        (error as? StoreError) == pattern
    }
}

/// Where objects live. SQLite implements it now; PostgreSQL will, without changes above this layer.
///
/// Writes are optimistic: the caller reads an object, builds its next version (rules, `If-Match`,
/// documents) outside the store's writer, and `update` or `delete` commit only if the object is
/// still at the version that was read. Inside the writer they run SQL only.
public protocol ObjectStore: Sendable {
    /// Stores a new object; throws ``StoreError/duplicate`` if its guid is taken. `key`, the
    /// request's `Idempotency-Key`, is marked as run in the same transaction.
    func insert(_ object: StoredObject, marking key: IdempotencyMark?) async throws

    /// The object, or nil.
    func object(in collection: String, guid: String) async throws -> StoredObject?

    /// Replaces the object `next` names with `next`, if it is still at `expectedVersion`; throws
    /// ``StoreError/versionChanged`` when another write came first, ``StoreError/notFound`` when
    /// it is gone. `key` is marked as run in the same transaction.
    func update(_ next: StoredObject, expectedVersion: Int64, marking key: IdempotencyMark?) async throws

    /// Deletes an object if it is still at `expectedVersion`; throws like
    /// ``update(_:expectedVersion:marking:)``. `actor`, the user deleting it, is recorded in the
    /// delete's change-log entry (ASYNC handlers run with that user's rights).
    func delete(
        in collection: String, guid: String, expectedVersion: Int64, marking key: IdempotencyMark?,
        by actor: String?
    ) async throws

    /// Marks a stored blob as about to be referenced by an upload that reuses its bytes, so that
    /// collection keeps it until the upload's write commits (claims younger than collection's
    /// minimum age protect). `now` is wall-clock milliseconds, as file ages are.
    func claimBlob(_ sha256: String, at now: Int64) async throws

    /// The documents of these objects that exist and match `restriction`, by guid; one round trip.
    func objects(in collection: String, guids: [String], restriction: QueryExpression?) async throws
        -> [String: [UInt8]]

    /// One page of a collection.
    func list(_ request: ListRequest) async throws -> ListPage

    /// One object of the request's collection matching its filter and restriction, each equally
    /// likely (no document when none matches), with the number of matches when the request asks
    /// for a total, read in the same transaction. Sort, start and count do not apply.
    func randomPick(_ request: ListRequest) async throws -> ListPage

    /// What access checks need to know of a user: flags from the `FFUser` object and the groups
    /// that list them; nil when the user does not exist.
    func accessFacts(userGuid: String) async throws -> UserAccessFacts?
}

extension ObjectStore {
    /// Stores a new object for a write without an `Idempotency-Key`.
    public func insert(_ object: StoredObject) async throws {
        try await insert(object, marking: nil)
    }

    /// Replaces an object for a write without an `Idempotency-Key`.
    public func update(_ next: StoredObject, expectedVersion: Int64) async throws {
        try await update(next, expectedVersion: expectedVersion, marking: nil)
    }

    /// Deletes an object for a write without an `Idempotency-Key`.
    public func delete(in collection: String, guid: String, expectedVersion: Int64) async throws {
        try await delete(in: collection, guid: guid, expectedVersion: expectedVersion, marking: nil, by: nil)
    }

    /// The documents of these objects that exist, by guid.
    public func objects(in collection: String, guids: [String]) async throws -> [String: [UInt8]] {
        try await objects(in: collection, guids: guids, restriction: nil)
    }

    /// One object matching `filter`, each equally likely.
    public func randomObject(in collection: String, matching filter: QueryExpression?) async throws
        -> [UInt8]?
    {
        try await randomPick(ListRequest(collection: collection, filter: filter)).documents.first
    }
}

/// A user's standing for access checks.
public struct UserAccessFacts: Sendable, Equatable {
    /// `admin: true` on the user object.
    public var isAdmin: Bool
    /// False when an administrator set `active: false`.
    public var isActive: Bool
    /// Guids of the `FFUserGroup` objects whose `users` name this user.
    public var groups: [String]

    public init(isAdmin: Bool, isActive: Bool, groups: [String]) {
        self.isAdmin = isAdmin
        self.isActive = isActive
        self.groups = groups
    }
}
