/// How big a query is, and the limits that keep its cost bounded.
///
/// A dotted path of n parts can also be read through a reference at each of its n − 1 dots
/// (`a.b.c`: `b.c` of what `a` refers to, or `c` of what `a.b` refers to), and each of those is a
/// join; so the limits count terms, parts per path and joins in all.
public struct QueryShape: Sendable, Equatable {
    /// Comparisons, `matches` and `contains_*` predicates at most in one query.
    public static let maximumTerms = 32
    /// Parts of a dotted path in a query.
    public static let maximumPathParts = 8
    /// Joins through references, summed over the query's paths.
    public static let maximumJoins = 16

    /// Predicates in the query.
    public private(set) var terms = 0
    /// Joins through references the query's paths need.
    public private(set) var joins = 0
    /// The most parts of any one path.
    public private(set) var longestPath = 0
    /// `matches` predicates: their cost is ICU's, which SQLite's step count does not see.
    public private(set) var regularExpressions = 0

    /// The shape of `expression`.
    public init(_ expression: QueryExpression) {
        add(expression)
    }

    private mutating func add(_ expression: QueryExpression) {
        switch expression {
        case .and(let parts), .or(let parts): for part in parts { add(part) }
        case .not(let inner): add(inner)
        case .comparison(let path, _, _), .matches(let path, _), .contains(let path, _, _):
            if case .matches = expression { regularExpressions += 1 }
            terms += 1
            longestPath = max(longestPath, path.components.count)
            joins += Self.joins(of: path)
        case .randomPick, .constant: break
        }
    }

    /// The joins a path needs when it may be read through references.
    public static func joins(of path: FieldPath) -> Int {
        path.components.first == "ffACL" ? 0 : path.components.count - 1
    }

    /// Throws, naming the limit, when the shape is over one of them.
    public func check() throws(QueryError) {
        if terms > Self.maximumTerms {
            throw QueryError(
                message: "the query has \(terms) terms; at most \(Self.maximumTerms) are allowed",
                column: 1, query: "", expected: [])
        }
        if longestPath > Self.maximumPathParts {
            throw QueryError(
                message:
                    "a field path in the query has \(longestPath) parts; at most \(Self.maximumPathParts) are allowed",
                column: 1, query: "", expected: [])
        }
        if joins > Self.maximumJoins {
            throw QueryError(
                message:
                    "the query's dotted paths need \(joins) joins through references; at most \(Self.maximumJoins) are allowed (a path of n parts needs n - 1)",
                column: 1, query: "", expected: [])
        }
    }
}
