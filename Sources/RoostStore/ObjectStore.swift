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

    public init(
        collection: String, guid: String, document: [UInt8], createdBy: String?, createdAt: Int64,
        updatedBy: String?, updatedAt: Int64, version: Int64
    ) {
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

/// A dotted path into an object, such as `author.name`; each part is an identifier.
public struct FieldPath: Sendable, Hashable, CustomStringConvertible {
    public let components: [String]

    /// Parses `a.b.c`; nil unless every part matches `[A-Za-z_][A-Za-z0-9_]*`.
    public init?(_ text: String) {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard !parts.isEmpty, parts.count <= 16, parts.allSatisfy(FieldPath.isIdentifier) else { return nil }
        components = parts
    }

    public var description: String { components.joined(separator: ".") }

    static func isIdentifier(_ text: String) -> Bool {
        guard let first = text.utf8.first, text.utf8.count <= 64 else { return false }
        func isLetter(_ byte: UInt8) -> Bool {
            (byte >= 65 && byte <= 90) || (byte >= 97 && byte <= 122) || byte == 95
        }
        return isLetter(first) && text.utf8.allSatisfy { isLetter($0) || ($0 >= 48 && $0 <= 57) }
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
    /// Empty means creation order.
    public var sort: [SortKey]
    public var start: Int
    public var count: Int
    /// Whether to count all matches too; off by default because counting costs a scan.
    public var includeTotal: Bool

    public init(
        collection: String, sort: [SortKey] = [], start: Int = 0, count: Int = 100, includeTotal: Bool = false
    ) {
        self.collection = collection
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
    }

    public let kind: Kind

    public static let duplicate = StoreError(kind: .duplicate)
    public static let notFound = StoreError(kind: .notFound)

    /// Lets `catch StoreError.duplicate` match.
    public static func ~= (pattern: StoreError, error: any Error) -> Bool {
        (error as? StoreError) == pattern
    }
}

/// Where objects live. SQLite implements it now; PostgreSQL will, without changes above this layer.
///
/// Reads and writes of one object are atomic; `update` and `delete` run their closure inside the
/// same transaction as the write, so version checks cannot race.
public protocol ObjectStore: Sendable {
    /// Stores a new object; throws ``StoreError/duplicate`` if its guid is taken.
    func insert(_ object: StoredObject) async throws

    /// The object, or nil.
    func object(in collection: String, guid: String) async throws -> StoredObject?

    /// Replaces an object with what `transform` makes of it; throws ``StoreError/notFound``.
    func update(
        in collection: String, guid: String,
        _ transform: @escaping @Sendable (StoredObject) throws -> StoredObject
    ) async throws -> StoredObject

    /// Deletes an object once `check` accepts it; throws ``StoreError/notFound``.
    func delete(in collection: String, guid: String, check: @escaping @Sendable (StoredObject) throws -> Void)
        async throws

    /// One page of a collection.
    func list(_ request: ListRequest) async throws -> ListPage
}
