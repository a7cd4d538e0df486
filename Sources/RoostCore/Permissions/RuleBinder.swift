import RoostJSON
import RoostQuery

/// A rule with the caller filled in: always allowed, never, or allowed for the objects a filter
/// matches.
enum BoundRule: Sendable, Equatable {
    case allow
    case deny
    case filter(QueryExpression)

    init(_ expression: QueryExpression) {
        switch expression {
        case .constant(true): self = .allow
        case .constant(false): self = .deny
        default: self = .filter(expression)
        }
    }

    /// The rule as one expression, constants included.
    var expression: QueryExpression {
        switch self {
        case .allow: .constant(true)
        case .deny: .constant(false)
        case .filter(let expression): expression
        }
    }
}

/// Replaces a rule's principals and variables with what they are for one request, and folds the
/// constants away, so what remains is a plain query on the object's fields.
///
/// A comparison with `@user.*` for an anonymous caller, or with a body field of a request that has
/// no body, is false, so `createdBy eq @user.guid` never matches anonymous objects.
struct RuleBinder {
    let caller: Principal?
    /// The request body of a create or update; nil elsewhere.
    let body: JSONObject?

    func bind(_ rule: RuleExpression) -> QueryExpression {
        switch rule {
        case .and(let parts): return Self.and(parts.map(bind))
        case .or(let parts): return Self.or(parts.map(bind))
        case .not(let inner): return Self.not(bind(inner))
        case .constant(let flag): return .constant(flag)
        case .loggedIn: return .constant(caller != nil)
        case .randomPick: return .constant(false)
        case .comparison(let left, let comparison, let right):
            return bindComparison(left, comparison, right)
        case .matches(let left, let pattern):
            switch left {
            case .field(let path): return .matches(path, pattern)
            default:
                guard let value = self.value(of: left) else { return .constant(false) }
                return .constant(QueryEvaluator.matches(.matches(Self.valuePath, pattern), Self.wrap(value)))
            }
        case .contains(let left, let mode, let right):
            guard let words = self.words(of: right), !words.isEmpty else { return .constant(false) }
            switch left {
            case .field(let path): return .contains(path, mode, words)
            default:
                guard let value = self.value(of: left) else { return .constant(false) }
                return .constant(
                    QueryEvaluator.matches(.contains(Self.valuePath, mode, words), Self.wrap(value)))
            }
        }
    }

    private func bindComparison(_ left: RuleOperand, _ comparison: ComparisonOperator, _ right: RuleOperand)
        -> QueryExpression
    {
        guard let literal = self.literal(of: right) else { return .constant(false) }
        if case .field(let path) = left { return .comparison(path, comparison, literal) }
        // A variable on the left: known now, so the answer is too.
        guard let value = self.value(of: left) else { return .constant(false) }
        return .constant(QueryEvaluator.compare(value, comparison, literal))
    }

    /// A variable's or literal's value; nil when it has none here (anonymous, no body).
    /// A missing body field is JSON null, as a missing object field is.
    private func value(of operand: RuleOperand) -> JSONValue? {
        switch operand {
        case .field: return nil
        case .literal(let literal): return Self.json(literal)
        case .words(let words): return .array(words.map(JSONValue.string))
        case .variable(.userGuid): return caller.map { .string($0.userGuid) }
        case .variable(.userGroups): return caller.map { .array($0.groups.map(JSONValue.string)) }
        case .variable(.requestBody(let path)):
            guard let body else { return nil }
            return QueryEvaluator.value(at: path, in: body) ?? .null
        }
    }

    private func literal(of operand: RuleOperand) -> QueryLiteral? {
        switch value(of: operand) {
        case .string(let text)?: .string(text)
        case .number(let number)?: .number(number)
        case .bool(let flag)?: .bool(flag)
        case .null?: .null
        default: nil
        }
    }

    private func words(of operand: RuleOperand) -> [String]? {
        switch value(of: operand) {
        case .string(let text)?: text.split(separator: " ").map(String.init)
        case .array(let elements)?: elements.compactMap(\.stringValue)
        default: nil
        }
    }

    private static let valuePath = FieldPath("value")!

    private static func wrap(_ value: JSONValue) -> JSONObject {
        JSONObject(uniqueMembers: [("value", value)])
    }

    private static func json(_ literal: QueryLiteral) -> JSONValue {
        switch literal {
        case .string(let text): .string(text)
        case .number(let number): .number(number)
        case .bool(let flag): .bool(flag)
        case .null: .null
        }
    }

    static func and(_ parts: [QueryExpression]) -> QueryExpression {
        if parts.contains(.constant(false)) { return .constant(false) }
        let rest = parts.filter { $0 != .constant(true) }
        return rest.isEmpty ? .constant(true) : rest.count == 1 ? rest[0] : .and(rest)
    }

    static func or(_ parts: [QueryExpression]) -> QueryExpression {
        if parts.contains(.constant(true)) { return .constant(true) }
        let rest = parts.filter { $0 != .constant(false) }
        return rest.isEmpty ? .constant(false) : rest.count == 1 ? rest[0] : .or(rest)
    }

    static func not(_ inner: QueryExpression) -> QueryExpression {
        if case .constant(let flag) = inner { return .constant(!flag) }
        return .not(inner)
    }
}
