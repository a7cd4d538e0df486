import Foundation

/// A comparison in Roost's query language.
public enum QueryOperator: String, Sendable {
    case eq, ne, lt, lte, gt, gte, matches
    case containsAny = "contains_any"
    case containsAll = "contains_all"
}

/// A literal in a query, escaped as the language requires: `O'Brien` becomes `'O''Brien'`.
public struct QueryValue: Sendable, Equatable, ExpressibleByStringLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByBooleanLiteral, ExpressibleByNilLiteral
{
    /// The literal as it appears in the query text.
    public let literal: String

    /// A string, quoted and with its quotes doubled.
    public init(_ value: String) {
        literal = "'" + value.replacingOccurrences(of: "'", with: "''") + "'"
    }

    /// An integer.
    public init(_ value: some BinaryInteger) { literal = String(value) }

    /// A number; infinities and NaN, which the language cannot write, become `null`.
    public init(_ value: Double) { literal = value.isFinite ? String(value) : "null" }

    /// `true` or `false`.
    public init(_ value: Bool) { literal = value ? "true" : "false" }

    /// A string literal, escaped.
    public init(stringLiteral value: String) { self.init(value) }
    /// An integer literal.
    public init(integerLiteral value: Int) { self.init(value) }
    /// A floating-point literal.
    public init(floatLiteral value: Double) { self.init(value) }
    /// A Boolean literal.
    public init(booleanLiteral value: Bool) { self.init(value) }
    /// `null`.
    public init(nilLiteral: ()) { literal = "null" }

    /// `random(guid)`: one matching object, picked at random by the server.
    public static let randomGuid = QueryValue(literal: "random(guid)")

    private init(literal: String) { self.literal = literal }
}

/// A condition built from fields, operators and values; combine with `&&`, `||` and `!`.
public indirect enum QueryCondition: Sendable, Equatable {
    case comparison(String, QueryOperator, QueryValue)
    case all([QueryCondition])
    case any([QueryCondition])
    case not(QueryCondition)
    /// Query text as is, for what the builder does not cover; it is not escaped.
    case raw(String)

    /// `field op value`.
    public static func field(_ path: String, _ op: QueryOperator, _ value: QueryValue) -> QueryCondition {
        .comparison(path, op, value)
    }

    /// Both conditions.
    public static func && (lhs: QueryCondition, rhs: QueryCondition) -> QueryCondition { .all([lhs, rhs]) }
    /// Either condition.
    public static func || (lhs: QueryCondition, rhs: QueryCondition) -> QueryCondition { .any([lhs, rhs]) }
    /// The opposite condition.
    public static prefix func ! (condition: QueryCondition) -> QueryCondition { .not(condition) }

    /// The condition in the query language; throws for a field name the language cannot hold.
    public func text() throws -> String {
        switch self {
        case .comparison(let field, let op, let value):
            guard Self.isValidField(field) else {
                throw RoostError(
                    status: nil, code: RoostError.Code.invalidQuery,
                    message:
                        "'\(field)' is not a field path; use letters, digits and '_', with '.' between nested names."
                )
            }
            return "\(field) \(op.rawValue) \(value.literal)"
        case .all(let parts): return "(" + (try parts.map { try $0.text() }.joined(separator: " and ")) + ")"
        case .any(let parts): return "(" + (try parts.map { try $0.text() }.joined(separator: " or ")) + ")"
        case .not(let inner): return "not (\(try inner.text()))"
        case .raw(let text): return "(\(text))"
        }
    }

    static func isValidField(_ path: String) -> Bool {
        !path.isEmpty && path.count <= 256
            && path.split(separator: ".", omittingEmptySubsequences: false).allSatisfy { part in
                guard let first = part.first, first.isASCII, first.isLetter || first == "_" else {
                    return false
                }
                return part.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") }
            }
    }
}

/// A query on one collection, built step by step and run with ``all(cachePolicy:)``,
/// ``first(cachePolicy:)``, ``random()`` or ``pages(size:)``.
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

    /// Same as ``where(_:_:_:)``, for reading aloud.
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

    /// Inlines referenced objects up to `depth` levels (0 to 3).
    public func inlining(depth: Int) -> Query {
        var query = self
        query.depth = depth
        return query
    }

    /// The path and query string this query requests.
    public func path(start: Int? = nil, count: Int? = nil) throws -> String {
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
        return parameters.isEmpty ? path : path + "?" + parameters.joined(separator: "&")
    }

    private static func encode(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .pathSegment) ?? text
    }

    private struct Page: Decodable {
        let items: [Stored<Model>]
    }

    /// One page of results.
    public func page(start: Int = 0, count: Int = 100, cachePolicy: CachePolicy? = nil) async throws
        -> [Stored<Model>]
    {
        let data = try await client.get(try path(start: start, count: count), cachePolicy: cachePolicy)
        return try Wire.decode(Page.self, from: data).items
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

    /// The results page by page, as an `AsyncSequence`; stops after the first short page.
    public func pages(size: Int = 100, cachePolicy: CachePolicy? = nil) -> AsyncThrowingStream<
        [Stored<Model>], any Error
    > {
        AsyncThrowingStream { continuation in
            let task = Task {
                do {
                    var start = 0
                    while true {
                        let page = try await self.page(start: start, count: size, cachePolicy: cachePolicy)
                        if !page.isEmpty { continuation.yield(page) }
                        if page.count < size { break }
                        start += size
                    }
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in task.cancel() }
        }
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
    /// not escaped: build queries from user input with ``Query/where(_:_:_:)`` instead.
    public nonisolated func query<Model: RoostModel>(_ type: Model.Type, raw text: String) -> Query<Model> {
        Query(client: self, condition: .raw(text))
    }
}
