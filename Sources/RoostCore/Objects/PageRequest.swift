import RoostQuery
import RoostStore

/// One key of a page's order.
public struct SortField: Sendable, Equatable {
    public var field: FieldPath
    public var descending: Bool

    public init(field: FieldPath, descending: Bool) {
        self.field = field
        self.descending = descending
    }
}

/// Which page of a collection a caller asks for; the service adds the filter of a query and the
/// caller's access before the store sees it.
public struct PageRequest: Sendable, Equatable {
    public var collection: String
    /// Empty means creation order.
    public var sort: [SortField]
    public var start: Int
    public var count: Int
    /// Whether to count all matches too.
    public var includeTotal: Bool

    public init(
        collection: String, sort: [SortField] = [], start: Int = 0, count: Int = 100,
        includeTotal: Bool = false
    ) {
        self.collection = collection
        self.sort = sort
        self.start = start
        self.count = count
        self.includeTotal = includeTotal
    }

    /// The store's request for this page, matching `filter`.
    func listRequest(filter: QueryExpression? = nil) -> ListRequest {
        ListRequest(
            collection: collection, filter: filter,
            sort: sort.map { SortKey(field: $0.field, descending: $0.descending) }, start: start,
            count: count,
            includeTotal: includeTotal)
    }
}

/// The documents of one page as the caller may see them, and the total when it was asked for.
public struct Page: Sendable, Equatable {
    public var documents: [[UInt8]]
    public var total: Int?

    public init(documents: [[UInt8]], total: Int?) {
        self.documents = documents
        self.total = total
    }

    init(_ page: ListPage) {
        self.init(documents: page.documents, total: page.total)
    }
}
