import Foundation

/// A query's condition evaluated on the device, with the server's semantics (see the SQLite
/// compiler's notes): a comparison with a missing field or a value of another JSON type is false,
/// `eq null` matches a missing field or null, `ne` is exactly `not eq`, strings compare by bytes,
/// numbers as numbers. Used to show queued writes in query results and to answer offline from
/// cached objects.
///
/// Answers nil where the device cannot tell: raw query text, `random(guid)`, and a path that
/// reaches into a referenced object (the server looks through references; the device has only
/// the reference).
extension QueryCondition {
    func matches(_ document: [String: JSON]) -> Bool? {
        switch self {
        case .raw: return nil
        case .not(let inner): return inner.matches(document).map { !$0 }
        case .all(let parts):
            let answers = parts.map { $0.matches(document) }
            if answers.contains(false) { return false }
            return answers.contains(nil) ? nil : true
        case .any(let parts):
            let answers = parts.map { $0.matches(document) }
            if answers.contains(true) { return true }
            return answers.contains(nil) ? nil : false
        case .comparison(let path, let op, let value):
            guard let literal = value.json else { return nil }
            guard let found = Self.lookup(path, in: document) else { return nil }
            return Self.compare(found, op, literal)
        }
    }

    /// The field's value (`.some(nil)` when missing), or nil when the path runs into a
    /// reference the device cannot look through.
    static func lookup(_ path: String, in document: [String: JSON]) -> JSON?? {
        var current = JSON.object(document)
        for (depth, part) in path.split(separator: ".").map(String.init).enumerated() {
            guard case .object(let members) = current else { return .some(nil) }
            if let next = members[part] {
                current = next
            } else {
                // Below the top (where `ffUrl` is the object's own URL), an object with `ffUrl`
                // is a reference: the field may be in the object it points to.
                return depth > 0 && members["ffUrl"] != nil ? nil : .some(nil)
            }
        }
        return .some(current)
    }

    static func compare(_ field: JSON?, _ op: QueryOperator, _ literal: JSON) -> Bool {
        switch op {
        case .ne: return !compare(field, .eq, literal)
        case .eq:
            if literal == .null { return field == nil || field == .null }
            return field == literal
        case .lt, .lte, .gt, .gte:
            guard let order = order(field, literal) else { return false }
            switch op {
            case .lt: return order < 0
            case .lte: return order <= 0
            case .gt: return order > 0
            default: return order >= 0
            }
        case .matches:
            guard case .string(let text)? = field, case .string(let pattern) = literal,
                let expression = try? NSRegularExpression(pattern: pattern)
            else { return false }
            return expression.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)) != nil
        case .containsAny, .containsAll:
            guard case .string(let list) = literal else { return false }
            let words = Set(list.split(separator: " ").map(String.init))
            let present: Set<String>
            switch field {
            case .array(let items)?: present = Set(items.compactMap(\.stringValue)).intersection(words)
            case .string(let text)?:
                present = Set(text.split(separator: " ").map(String.init)).intersection(words)
            default: return false
            }
            return op == .containsAny ? !present.isEmpty : present.count == words.count
        }
    }

    /// -1, 0 or 1 for two numbers or two strings (by bytes); nil for anything else.
    static func order(_ field: JSON?, _ literal: JSON) -> Int? {
        switch (field, literal) {
        case (.number(let a)?, .number(let b)): return a < b ? -1 : a == b ? 0 : 1
        case (.string(let a)?, .string(let b)):
            let left = Array(a.utf8)
            let right = Array(b.utf8)
            return left == right ? 0 : left.lexicographicallyPrecedes(right) ? -1 : 1
        default: return nil
        }
    }
}

/// Sorting by a query's keys, on the device, as the server sorts (SQLite's order of
/// `json_extract`): missing and null first, then numbers (true and false as 1 and 0), then
/// strings by bytes; ties break on guid in the direction of the last key.
enum LocalSort {
    static func sorted(_ documents: [[String: JSON]], by keys: [String]) -> [[String: JSON]] {
        guard !keys.isEmpty else { return documents }
        let parsed = keys.map { key -> (String, Bool) in
            let parts = key.split(separator: " ")
            return (String(parts[0]), parts.count > 1 && parts[1] == "desc")
        }
        let lastDescending = parsed.last?.1 ?? false
        return documents.sorted { first, second in
            for (path, descending) in parsed {
                let order = rank(
                    QueryCondition.lookup(path, in: first) ?? nil,
                    QueryCondition.lookup(path, in: second) ?? nil)
                if order != 0 { return descending ? order > 0 : order < 0 }
            }
            let order = rank(first["guid"], second["guid"])
            return lastDescending ? order > 0 : order < 0
        }
    }

    private static func rank(_ a: JSON?, _ b: JSON?) -> Int {
        func sortable(_ value: JSON?) -> JSON? {
            if case .bool(let flag)? = value { return .number(flag ? 1 : 0) }
            return value
        }
        func kind(_ value: JSON?) -> Int {
            switch value {
            case nil, .null?: 0
            case .bool?, .number?: 1
            case .string?: 2
            default: 3
            }
        }
        let (a, b) = (sortable(a), sortable(b))
        if kind(a) != kind(b) { return kind(a) < kind(b) ? -1 : 1 }
        if let b, let order = QueryCondition.order(a, b) { return order }
        return 0
    }
}
