import RoostJSON
import RoostQuery
import RoostStore

/// What the dashboard and other admin tools read of the store, for administrators only (checked
/// before any work): the collections with bounded counts, and any collection by keyset cursor.
public struct CollectionAdministration: Sendable {
    /// What one listing of the collections may cost.
    public struct Limits: Sendable, Equatable {
        /// Collections listed at most (their names are seeks on an index, each counted).
        public var collections = 200
        /// Objects counted per collection unless exact counts are asked for.
        public var countLimit = 10_000

        /// The defaults: 200 collections, counts up to 10,000.
        public init() {}
    }

    /// Objects one page holds at most, and by default.
    public static let maximumPageSize = 200
    public static let defaultPageSize = 50

    let store: any CollectionBrowsing
    /// What a listing may cost.
    public let limits: Limits

    /// Administration over `store`, listing within `limits`.
    public init(store: any CollectionBrowsing, limits: Limits = Limits()) {
        self.store = store
        self.limits = limits
    }

    /// The first ``Limits/collections`` collections by name with their counts (bounded unless
    /// `exact`), and whether more collections exist.
    public func collections(exact: Bool, by principal: Principal) async throws
        -> (items: [CollectionSummary], truncated: Bool)
    {
        try AccountService.requireAdmin(principal)
        let items = try await store.collections(
            limit: limits.collections + 1, countLimit: exact ? nil : limits.countLimit)
        return (Array(items.prefix(limits.collections)), items.count > limits.collections)
    }

    /// A page of objects and the cursors of the pages beside it.
    public struct Page: Sendable {
        /// The objects' JSON texts, in creation order.
        public var documents: [[UInt8]]
        /// The cursor of the page after this one; nil on the last page.
        public var next: String?
        /// The cursor of the page before this one; nil on the first page.
        public var previous: String?
    }

    /// Objects of `collection` in creation order, `limit` at most, after the cursor `after` or
    /// before the cursor `before` (not both), matching `filter` (Roost's query language).
    public func objects(
        in collection: String, after: String?, before: String?, limit: Int?, filter: String?,
        by principal: Principal
    ) async throws -> Page {
        try AccountService.requireAdmin(principal)
        try ObjectService.validate(collection: collection)
        let limit = limit ?? Self.defaultPageSize
        guard (1...Self.maximumPageSize).contains(limit) else {
            throw RoostError.invalidParameter("limit", "limit is from 1 to \(Self.maximumPageSize).")
        }
        guard after == nil || before == nil else {
            throw RoostError.invalidParameter("before", "Give after or before, not both.")
        }
        let direction: KeysetRequest.Direction =
            if let before { .before(try Self.position(of: before, parameter: "before")) } else {
                .after(try after.map { try Self.position(of: $0, parameter: "after") })
            }
        var request = KeysetRequest(collection: collection, direction: direction, limit: limit)
        let text = filter.flatMap { $0.allSatisfy(\.isWhitespace) ? nil : $0 }
        if let text {
            do throws(QueryError) {
                let plan = try QueryPlan(QueryParser.parse(text))
                guard !plan.pickRandom else {
                    throw QueryError(
                        message: "random(guid) picks one object; the browser pages through every match",
                        column: 1, query: text, expected: [])
                }
                request.filter = plan.filter
                if let filter = plan.filter {
                    let shape = QueryShape(filter)
                    try shape.check()
                    request.references = shape.joins > 0 ? .unrestricted : nil
                }
            } catch {
                throw RoostError.invalidQuery(error, query: text)
            }
        }
        var rows: [PositionedDocument]
        do {
            rows = try await store.page(request)
        } catch let error as QueryError {
            throw RoostError.invalidQuery(error, query: text ?? "")
        }
        let more = rows.count > limit
        switch direction {
        case .after(let position):
            if more { rows.removeLast() }
            return Page(
                documents: rows.map(\.document), next: more ? rows.last.map(Self.cursor) : nil,
                previous: position == nil ? nil : rows.first.map(Self.cursor))
        case .before(let position):
            if more { rows.removeFirst() }
            return Page(
                documents: rows.map(\.document),
                next: rows.last.map(Self.cursor) ?? "o" + String(max(0, position - 1), radix: 36),
                previous: more ? rows.first.map(Self.cursor) : nil)
        }
    }

    /// A cursor is opaque to clients: a version letter and the row's position in base 36.
    static func cursor(_ row: PositionedDocument) -> String { "o" + String(row.position, radix: 36) }

    static func position(of cursor: String, parameter: String) throws -> Int64 {
        guard cursor.count <= 16, cursor.first == "o", let position = Int64(cursor.dropFirst(), radix: 36),
            position >= 0, !cursor.dropFirst().hasPrefix("-"), !cursor.dropFirst().hasPrefix("+")
        else {
            throw RoostError.invalidParameter(
                parameter, "\(parameter) is a cursor from a page's 'next' or 'previous', unchanged.")
        }
        return position
    }
}
