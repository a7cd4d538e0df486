/// A parsed query, FatFractal's URL query language as a tree.
public indirect enum QueryExpression: Sendable, Equatable {
    case and([QueryExpression])
    case or([QueryExpression])
    case not(QueryExpression)
    /// `path op literal`.
    case comparison(FieldPath, ComparisonOperator, QueryLiteral)
    /// `path matches 'regex'`.
    case matches(FieldPath, String)
    /// `path contains_any 'a b'` / `contains_all`: elements of an array or words of a string.
    case contains(FieldPath, ContainsMode, [String])
    /// `guid eq random(guid)`: pick one matching object at random. Only valid as a top-level
    /// conjunct; ``QueryPlan`` takes it out of the filter.
    case randomPick
    /// Always or never; access rules produce it, the parser does not.
    case constant(Bool)
}

/// The comparison operators.
public enum ComparisonOperator: String, Sendable, CaseIterable {
    case eq, ne, lt, lte, gt, gte
}

/// Whether any or all of the words must be present.
public enum ContainsMode: String, Sendable {
    case any = "contains_any"
    case all = "contains_all"
}

/// A literal on the right of a comparison.
public enum QueryLiteral: Sendable, Equatable {
    case string(String)
    /// The number's literal text, validated; compared as a number.
    case number(String)
    case bool(Bool)
    case null
}

/// A dotted path into an object, such as `author.name`; each part is an identifier.
public struct FieldPath: Sendable, Hashable, CustomStringConvertible {
    public let components: [String]

    /// Parses `a.b.c`; nil unless every part matches `[A-Za-z_][A-Za-z0-9_]*` (at most 16 parts).
    public init?(_ text: String) {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard !parts.isEmpty, parts.count <= 16, parts.allSatisfy(FieldPath.isIdentifier) else { return nil }
        components = parts
    }

    /// A path from parts that are each already an identifier.
    public init?(components: [String]) {
        guard !components.isEmpty, components.count <= 16, components.allSatisfy(FieldPath.isIdentifier)
        else { return nil }
        self.components = components
    }

    public var description: String { components.joined(separator: ".") }

    /// Whether `text` is one identifier: a letter or `_`, then letters, digits or `_` (at most 64).
    public static func isIdentifier(_ text: String) -> Bool {
        guard let first = text.utf8.first, text.utf8.count <= 64 else { return false }
        func isLetter(_ byte: UInt8) -> Bool {
            (byte >= 65 && byte <= 90) || (byte >= 97 && byte <= 122) || byte == 95
        }
        return isLetter(first) && text.utf8.allSatisfy { isLetter($0) || ($0 >= 48 && $0 <= 57) }
    }
}

/// A query split into what the store filters on and whether to pick one match at random.
public struct QueryPlan: Sendable, Equatable {
    /// The filter; nil matches everything.
    public let filter: QueryExpression?
    /// Whether `guid eq random(guid)` was among the top-level conjuncts.
    public let pickRandom: Bool

    /// Separates `random(guid)` from the filter; it may only be and-ed at the top level.
    public init(_ expression: QueryExpression) throws(QueryError) {
        var conjuncts: [QueryExpression]
        if case .and(let parts) = expression { conjuncts = parts } else { conjuncts = [expression] }
        let randomCount = conjuncts.filter { $0 == .randomPick }.count
        conjuncts.removeAll { $0 == .randomPick }
        if randomCount > 1 || conjuncts.contains(where: Self.containsRandom) {
            throw QueryError(
                message:
                    "random(guid) can only be and-ed with the rest of the query, once, as in (gender eq 'male' and guid eq random(guid))",
                column: 1, query: "", expected: [])
        }
        pickRandom = randomCount == 1
        filter = conjuncts.isEmpty ? nil : conjuncts.count == 1 ? conjuncts[0] : .and(conjuncts)
    }

    private static func containsRandom(_ expression: QueryExpression) -> Bool {
        switch expression {
        case .randomPick: true
        case .and(let parts), .or(let parts): parts.contains(where: containsRandom)
        case .not(let inner): containsRandom(inner)
        default: false
        }
    }
}

/// Why a query was refused: what was expected, and the 1-based column where parsing stopped.
public struct QueryError: Error, Sendable, Equatable, CustomStringConvertible {
    public let message: String
    public let column: Int
    public let query: String
    public let expected: [String]

    public init(message: String, column: Int, query: String, expected: [String]) {
        self.message = message
        self.column = column
        self.query = query
        self.expected = expected
    }

    public var description: String { message }
}
