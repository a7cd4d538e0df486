/// An access rule: the query language plus principals, as in `createdBy eq @user.guid` or
/// `loggedIn and (published eq true or members contains_any @user.guid)`.
///
/// The parser produces this superset for queries too; ``QueryParser/parse(_:)`` lowers it to a
/// ``QueryExpression``, which cannot hold variables.
public indirect enum RuleExpression: Sendable, Equatable {
    case and([RuleExpression])
    case or([RuleExpression])
    case not(RuleExpression)
    /// `public` (true) or `none` (false).
    case constant(Bool)
    /// `loggedIn`: the request carries a valid token.
    case loggedIn
    /// `left op right`; the left is a field or a variable, the right a literal or a variable.
    case comparison(RuleOperand, ComparisonOperator, RuleOperand)
    /// `left matches 'regex'`.
    case matches(RuleOperand, String)
    /// `left contains_any right`: the right is words in a string, or a variable.
    case contains(RuleOperand, ContainsMode, RuleOperand)
    /// `guid eq random(guid)`, queries only.
    case randomPick
}

/// One side of a rule's predicate.
public enum RuleOperand: Sendable, Equatable {
    /// A field of the object, e.g. `createdBy`.
    case field(FieldPath)
    case literal(QueryLiteral)
    /// The words of `contains_any 'a b'`.
    case words([String])
    case variable(RuleVariable)
}

/// What a rule may name besides the object: the user and the request.
public enum RuleVariable: Sendable, Equatable, CustomStringConvertible {
    /// `@user.guid`: the logged-in user's guid.
    case userGuid
    /// `@user.groups`: the guids of the `FFUserGroup`s that list the user.
    case userGroups
    /// `@request.body.path`: a field of the body of a create or update.
    case requestBody(FieldPath)

    /// Parses the text after `@`.
    init?(_ text: String) {
        switch text {
        case "user.guid": self = .userGuid
        case "user.groups": self = .userGroups
        default:
            guard text.hasPrefix("request.body."),
                let path = FieldPath(String(text.dropFirst("request.body.".count)))
            else { return nil }
            self = .requestBody(path)
        }
    }

    public var description: String {
        switch self {
        case .userGuid: "@user.guid"
        case .userGroups: "@user.groups"
        case .requestBody(let path): "@request.body.\(path)"
        }
    }
}

extension RuleExpression {
    /// The query this is, when it names no principal or variable (always, for parsed queries).
    var queryExpression: QueryExpression? {
        switch self {
        case .and(let parts):
            let lowered = parts.compactMap(\.queryExpression)
            return lowered.count == parts.count ? .and(lowered) : nil
        case .or(let parts):
            let lowered = parts.compactMap(\.queryExpression)
            return lowered.count == parts.count ? .or(lowered) : nil
        case .not(let inner): return inner.queryExpression.map { .not($0) }
        case .comparison(.field(let path), let comparison, .literal(let literal)):
            return .comparison(path, comparison, literal)
        case .matches(.field(let path), let pattern): return .matches(path, pattern)
        case .contains(.field(let path), let mode, .words(let words)): return .contains(path, mode, words)
        case .randomPick: return .randomPick
        default: return nil
        }
    }

    /// Whether the rule uses `@request.body`, which only creates and updates have.
    public var usesRequestBody: Bool {
        func isBody(_ operand: RuleOperand) -> Bool {
            if case .variable(.requestBody) = operand { return true }
            return false
        }
        switch self {
        case .and(let parts), .or(let parts): return parts.contains(where: \.usesRequestBody)
        case .not(let inner): return inner.usesRequestBody
        case .comparison(let left, _, let right), .contains(let left, _, let right):
            return isBody(left) || isBody(right)
        case .matches(let left, _): return isBody(left)
        default: return false
        }
    }
}

extension RuleExpression {
    /// Whether deciding the rule needs the request's body (`@request.body.…`).
    public var readsRequestBody: Bool {
        func reads(_ operand: RuleOperand) -> Bool {
            if case .variable(.requestBody) = operand { return true }
            return false
        }
        switch self {
        case .and(let parts), .or(let parts): return parts.contains { $0.readsRequestBody }
        case .not(let inner): return inner.readsRequestBody
        case .constant, .loggedIn, .randomPick: return false
        case .comparison(let left, _, let right), .contains(let left, _, let right):
            return reads(left) || reads(right)
        case .matches(let left, _): return reads(left)
        }
    }
}
