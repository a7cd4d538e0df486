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
    /// The value, for evaluating the query on the device; nil for `random(guid)`.
    let json: JSON?

    /// A string, quoted and with its quotes doubled.
    public init(_ value: String) {
        literal = "'" + value.replacingOccurrences(of: "'", with: "''") + "'"
        json = .string(value)
    }

    /// An integer.
    public init(_ value: some BinaryInteger) {
        literal = String(value)
        json = .number(Double(value))
    }

    /// A number; infinities and NaN, which the language cannot write, become `null`.
    public init(_ value: Double) {
        literal = value.isFinite ? String(value) : "null"
        json = value.isFinite ? .number(value) : .null
    }

    /// `true` or `false`.
    public init(_ value: Bool) {
        literal = value ? "true" : "false"
        json = .bool(value)
    }

    /// A string literal, escaped.
    public init(stringLiteral value: String) { self.init(value) }
    /// An integer literal.
    public init(integerLiteral value: Int) { self.init(value) }
    /// A floating-point literal.
    public init(floatLiteral value: Double) { self.init(value) }
    /// A Boolean literal.
    public init(booleanLiteral value: Bool) { self.init(value) }
    /// `null`.
    public init(nilLiteral: ()) {
        literal = "null"
        json = .null
    }

    /// `random(guid)`: one matching object, picked at random by the server.
    public static let randomGuid = QueryValue(literal: "random(guid)")

    private init(literal: String) {
        self.literal = literal
        json = nil
    }
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

    /// `field.ffUrl op 'url'`: a reference field compared with a reference. A reference is stored as
    /// `{"ffUrl": …}`, so the comparison is on its `ffUrl`.
    public static func field<Target>(_ path: String, _ op: QueryOperator, _ ref: Ref<Target>)
        -> QueryCondition
    {
        .comparison(path + ".ffUrl", op, QueryValue(ref.ffUrl))
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
