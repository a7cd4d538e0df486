import Foundation
import RoostJSON
import RoostQuery
import RoostStore

/// Decides a ``QueryExpression`` on one object in memory, with exactly the semantics of the SQL
/// compiler, so a single-object check and a filtered list always agree.
///
/// A comparison with a missing field or a value of another JSON type is false; `eq null` matches a
/// missing field or null; `ne` is `not eq`; strings compare by UTF-8 bytes; `contains_*` looks at
/// the string elements of an array, or the space-separated words of a string.
enum QueryEvaluator {
    static func matches(_ expression: QueryExpression, _ object: JSONObject) -> Bool {
        switch expression {
        case .and(let parts): return parts.allSatisfy { matches($0, object) }
        case .or(let parts): return parts.contains { matches($0, object) }
        case .not(let inner): return !matches(inner, object)
        case .constant(let flag): return flag
        case .randomPick: return true
        case .comparison(let path, let comparison, let literal):
            return compare(value(at: path, in: object), comparison, literal)
        case .matches(let path, let pattern):
            guard case .string(let text)? = value(at: path, in: object),
                let regex = try? NSRegularExpression(pattern: pattern)
            else { return false }
            return BoundedRegex.matches(regex, text)
        case .contains(let path, let mode, let words):
            return contains(value(at: path, in: object), mode, Set(words))
        }
    }

    /// The value at a dotted path; nil when any part is missing or not an object.
    static func value(at path: FieldPath, in object: JSONObject) -> JSONValue? {
        var current = JSONValue.object(object)
        for component in path.components {
            guard case .object(let nested) = current, let next = nested[component] else { return nil }
            current = next
        }
        return current
    }

    /// `value op literal` as the SQL compiler means it; nil is a missing value.
    static func compare(_ value: JSONValue?, _ comparison: ComparisonOperator, _ literal: QueryLiteral)
        -> Bool
    {
        if comparison == .ne { return !compare(value, .eq, literal) }
        switch (literal, value) {
        case (.null, nil), (.null, .null?): return comparison == .eq
        case (.bool(let flag), .bool(let actual)?): return comparison == .eq && flag == actual
        case (.string(let expected), .string(let actual)?):
            return ordered(
                Array(actual.utf8).lexicographicallyPrecedes(Array(expected.utf8)),
                equal: actual.utf8.elementsEqual(expected.utf8), comparison)
        case (.number(let expected), .number(let actual)?):
            if let left = Int64(actual), let right = Int64(expected) {
                return ordered(left < right, equal: left == right, comparison)
            }
            guard let left = Double(actual), let right = Double(expected) else { return false }
            return ordered(left < right, equal: left == right, comparison)
        default: return false
        }
    }

    private static func ordered(_ less: Bool, equal: Bool, _ comparison: ComparisonOperator) -> Bool {
        switch comparison {
        case .eq: equal
        case .ne: !equal
        case .lt: less
        case .lte: less || equal
        case .gt: !less && !equal
        case .gte: !less
        }
    }

    private static func contains(_ value: JSONValue?, _ mode: ContainsMode, _ words: Set<String>) -> Bool {
        switch value {
        case .array(let elements)?:
            let present = Set(elements.compactMap(\.stringValue)).intersection(words)
            return mode == .any ? !present.isEmpty : present.count == words.count
        case .string(let text)?:
            let padded = " " + text + " "
            let test = { (word: String) in padded.contains(" " + word + " ") }
            return mode == .any ? words.contains(where: test) : words.allSatisfy(test)
        default: return false
        }
    }
}
