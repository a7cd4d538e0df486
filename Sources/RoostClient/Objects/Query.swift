import Foundation

/// A query on one collection, built step by step and run with ``all(cachePolicy:)``,
/// ``first(cachePolicy:)``, ``random()`` or ``pages(size:cachePolicy:)``.
///
/// ```swift
/// let pick = try await client.query(Celebrity.self)
///     .where("gender", .eq, "male").and("guid", .ne, QueryValue(left.guid)).random()
/// ```
public struct Query<Model: RoostModel>: Sendable {
    let client: Roost
    var condition: QueryCondition?
    var sortKeys: [String] = []
    var depth = 0
    var skipsUndecodable = false

    /// Adds a condition that must also hold.
    public func `where`(_ field: String, _ op: QueryOperator, _ value: QueryValue) -> Query {
        `where`(.comparison(field, op, value))
    }

    /// Adds a condition that must also hold.
    public func `where`(_ condition: QueryCondition) -> Query {
        var query = self
        query.condition = self.condition.map { $0 && condition } ?? condition
        return query
    }

    /// Adds a condition on a reference field: `where("owner", .eq, ref)` compares `owner.ffUrl`.
    public func `where`<Target>(_ field: String, _ op: QueryOperator, _ ref: Ref<Target>) -> Query {
        `where`(.field(field, op, ref))
    }

    /// Same as `where(_:_:_:)` with a value, for reading aloud.
    public func and(_ field: String, _ op: QueryOperator, _ value: QueryValue) -> Query {
        `where`(field, op, value)
    }

    /// Matches what matched so far, or this.
    public func or(_ field: String, _ op: QueryOperator, _ value: QueryValue) -> Query {
        var query = self
        let added = QueryCondition.comparison(field, op, value)
        query.condition = condition.map { $0 || added } ?? added
        return query
    }

    /// Orders results by a field; call again for a second key.
    public func sorted(by field: String, descending: Bool = false) -> Query {
        var query = self
        query.sortKeys.append(field + (descending ? " desc" : " asc"))
        return query
    }

    /// Leaves out objects that do not decode into `Model` instead of failing the whole read; each
    /// is reported in ``QueryPage/skipped`` (collection, guid, field). Without it a read fails
    /// with `decoding_failed`, naming the first such object.
    public func skippingUndecodable() -> Query {
        var query = self
        query.skipsUndecodable = true
        return query
    }

    /// Inlines referenced objects up to `depth` levels (0 to 3).
    public func inlining(depth: Int) -> Query {
        var query = self
        query.depth = depth
        return query
    }

    /// The path and query string this query requests.
    public func path(start: Int? = nil, count: Int? = nil, total: Bool = false) throws -> String {
        var path = "/ff/resources/\(Model.collection)"
        if let condition {
            var text = try condition.text()
            if !text.hasPrefix("(") || condition.isLeaf { text = "(\(text))" }
            path += "/" + (text.addingPercentEncoding(withAllowedCharacters: .queryPath) ?? text)
        }
        var parameters: [String] = []
        if !sortKeys.isEmpty { parameters.append("sort=" + Self.encode(sortKeys.joined(separator: ","))) }
        if let start, start > 0 { parameters.append("start=\(start)") }
        if let count { parameters.append("count=\(count)") }
        if depth > 0 { parameters.append("depthRef=\(depth)") }
        if total { parameters.append("total=true") }
        return parameters.isEmpty ? path : path + "?" + parameters.joined(separator: "&")
    }

    private static func encode(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .pathSegment) ?? text
    }

    /// One page of results, with this device's queued writes applied (see ``Stored/hasPendingWrites``).
    public func page(start: Int = 0, count: Int = 100, cachePolicy: CachePolicy? = nil) async throws
        -> [Stored<Model>]
    {
        try await fetchPage(start: start, count: count, cachePolicy: cachePolicy).items
    }

    /// The number of matching objects, counted by the server.
    public func count() async throws -> Int {
        try await fetchPage(count: 1, total: true, cachePolicy: .networkOnly).total ?? 0
    }

    /// Every result, fetched a thousand at a time.
    public func all(cachePolicy: CachePolicy? = nil) async throws -> [Stored<Model>] {
        var results: [Stored<Model>] = []
        for try await page in pages(size: 1000, cachePolicy: cachePolicy) { results += page }
        return results
    }

    /// The first result, or nil when nothing matches.
    public func first(cachePolicy: CachePolicy? = nil) async throws -> Stored<Model>? {
        try await page(count: 1, cachePolicy: cachePolicy).first
    }

    /// One matching object picked at random by the server (uniformly), or nil when none match.
    public func random() async throws -> Stored<Model>? {
        try await `where`("guid", .eq, .randomGuid).page(count: 1, cachePolicy: .networkOnly).first
    }

    /// The results page by page, as an `AsyncSequence` that asks the server for a page only
    /// when the loop asks for it; it stops after the first short page.
    public func pages(size: Int = 100, cachePolicy: CachePolicy? = nil) -> QueryPages<Model> {
        QueryPages(query: self, size: size, cachePolicy: cachePolicy)
    }
}

extension QueryCondition {
    var isLeaf: Bool {
        if case .comparison = self { return true }
        return false
    }
}

extension CharacterSet {
    /// What a query may keep unescaped in the path: the parentheses that mark it as a query.
    static let queryPath = CharacterSet.pathSegment.union(CharacterSet(charactersIn: "()"))
}

extension Roost {
    /// A query on `Model`'s collection; with no conditions it lists the collection.
    public nonisolated func query<Model: RoostModel>(_ type: Model.Type) -> Query<Model> {
        Query(client: self)
    }

    /// A query written in Roost's query language, e.g. `"gender eq 'male'"`. Values in it are
    /// not escaped: build queries from user input with `Query.where(_:_:_:)` instead.
    public nonisolated func query<Model: RoostModel>(_ type: Model.Type, raw text: String) -> Query<Model> {
        Query(client: self, condition: .raw(text))
    }
}
