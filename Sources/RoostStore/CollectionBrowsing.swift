import RoostQuery

/// A collection's name and how many objects it holds, counted up to a limit.
public struct CollectionSummary: Sendable, Equatable {
    /// The collection's name.
    public var name: String
    /// The objects counted: all of them when ``exact``, else the count stopped at its limit.
    public var count: Int
    /// False when counting stopped at its limit: the collection holds at least ``count``.
    public var exact: Bool

    /// A summary of a collection.
    public init(name: String, count: Int, exact: Bool) {
        self.name = name
        self.count = count
        self.exact = exact
    }
}

/// One stored object with its position in its collection's keyset order.
public struct PositionedDocument: Sendable, Equatable {
    /// The row's id: creation order, never reused; what a cursor holds.
    public var position: Int64
    /// The object's JSON text as it is served.
    public var document: [UInt8]

    /// A document at its position.
    public init(position: Int64, document: [UInt8]) {
        self.position = position
        self.document = document
    }
}

/// A keyset page request: objects of a collection in creation order, after or before a position.
public struct KeysetRequest: Sendable {
    public enum Direction: Sendable, Equatable {
        /// The first page, or the page after a position.
        case after(Int64?)
        /// The page before a position (the objects just before it, in creation order).
        case before(Int64)
    }

    /// The collection read.
    public var collection: String
    /// Only objects matching this; nil for all.
    public var filter: QueryExpression?
    /// What a filter may read through references; nil keeps dotted paths inside the object.
    public var references: ReferenceAccess?
    /// Where the page starts and which way it reads.
    public var direction: Direction
    /// Objects wanted; the store reads one more to tell whether the page is the last.
    public var limit: Int

    /// A page request; by default the first page of the whole collection.
    public init(
        collection: String, filter: QueryExpression? = nil, references: ReferenceAccess? = nil,
        direction: Direction = .after(nil), limit: Int
    ) {
        self.collection = collection
        self.filter = filter
        self.references = references
        self.direction = direction
        self.limit = limit
    }
}

/// What an administrator's tools read of the whole store, at a bounded cost per call: the
/// collections (with counts that stop at a limit unless asked for) and any collection by keyset
/// cursor (a seek on `(collection, id)`, never an OFFSET).
public protocol CollectionBrowsing: Sendable {
    /// The first `limit` collection names in byte order, each with its objects counted up to
    /// `countLimit` (nil counts them all), in one snapshot.
    func collections(limit: Int, countLimit: Int?) async throws -> [CollectionSummary]

    /// Up to `request.limit + 1` objects in creation order (the extra one says another page
    /// follows): after the position, or the ones just before it.
    func page(_ request: KeysetRequest) async throws -> [PositionedDocument]
}
