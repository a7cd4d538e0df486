import Foundation
import RoostQuery
import RoostStore

/// Compiles a ``QueryExpression`` to a SQLite condition on the `objects` table.
///
/// Every literal is a bound parameter. Field paths are validated identifiers, so they are written
/// into the SQL as `'$.a.b'` text, which lets SQLite use expression indexes on them.
///
/// Semantics: a comparison with a missing field or a value of another JSON type is false;
/// `eq null` matches a missing field or null; `ne` is exactly `not eq`, so it matches objects that
/// lack the field. Strings compare by bytes (binary collation), numbers as numbers.
enum SQLiteQueryCompiler {
    /// Metadata fields that have columns of their own, and whether each holds integers.
    static let metadataColumns: [String: (column: String, isInteger: Bool)] = [
        "guid": ("guid", false), "createdBy": ("created_by", false), "updatedBy": ("updated_by", false),
        "createdAt": ("created_at", true), "updatedAt": ("updated_at", true), "version": ("version", true),
        "ffACL": ("acl", false),
    ]

    /// The condition. With `references`, a dotted path also matches through a referenced object
    /// that the caller may see (queries want this); without, paths stay inside the object (access
    /// rules must never look through references).
    static func condition(_ expression: QueryExpression, references: ReferenceAccess? = .unrestricted)
        throws(QueryError) -> SQL
    {
        let condition = { (part: QueryExpression) throws(QueryError) -> SQL in
            try self.condition(part, references: references)
        }
        switch expression {
        case .and(let parts):
            return "("
                + SQL.joined(
                    try parts.map { (part) throws(QueryError) in try condition(part) }, separator: " AND ")
                + ")"
        case .or(let parts):
            return "("
                + SQL.joined(
                    try parts.map { (part) throws(QueryError) in try condition(part) }, separator: " OR ")
                + ")"
        case .not(let inner):
            return "(NOT " + (try condition(inner)) + ")"
        case .comparison(let path, let comparison, let literal):
            if comparison == .ne {
                return "(NOT " + (try condition(.comparison(path, .eq, literal))) + ")"
            }
            return try throughReferences(path, references) { (field) throws(QueryError) in
                try self.comparison(field, comparison, literal)
            }
        case .matches(let path, let pattern):
            if let problem = BoundedRegex.problem(with: pattern) {
                throw QueryError(message: problem, column: 1, query: "", expected: ["regular expression"])
            }
            return try throughReferences(path, references) { field in
                let (column, json) = source(field)
                return
                    "(json_type(\(raw: column), \(raw: json)) IS 'text' AND json_extract(\(raw: column), \(raw: json)) REGEXP \(pattern))"
            }
        case .contains(let path, let mode, let words):
            return try throughReferences(path, references) { field in contains(field, mode, words) }
        case .randomPick:
            return "1"
        case .constant(let flag):
            return flag ? "1" : "0"
        }
    }

    /// The predicate on `path` itself, or, for `a.b.c`, on `b.c` of the object that `a` refers to
    /// (and on `c` of the one `a.b` refers to): FatFractal's `(user.userName eq 'alice')`.
    /// One level of references; the referenced object is found by its (collection, guid) index,
    /// and counts only when the caller may read it and, for an owner-only field, created it.
    private static func throughReferences(
        _ path: FieldPath, _ references: ReferenceAccess?, _ build: (FieldPath) throws(QueryError) -> SQL
    ) throws(QueryError) -> SQL {
        let direct = try build(path)
        guard let references, QueryShape.joins(of: path) > 0 else { return direct }
        let visible = try visibility(references)
        var alternatives = [direct]
        for split in 1..<path.components.count {
            guard let rest = FieldPath(components: Array(path.components[split...])),
                let prefix = FieldPath(components: Array(path.components[..<split]))
            else { continue }
            let url = "substr(json_extract(objects.document, '$.\(prefix).ffUrl'), 15)"
            var target: SQL = """
                EXISTS (SELECT 1 FROM objects AS referenced WHERE \
                referenced.collection = substr(\(raw: url), 1, instr(\(raw: url), '/') - 1) AND \
                referenced.guid = substr(\(raw: url), instr(\(raw: url), '/') + 1)
                """
            if let visible { target = target + " AND " + visible }
            if let owned = ownerGuard(on: rest.components[0], references) {
                target = target + " AND " + owned
            }
            alternatives.append(target + " AND " + (try build(rest)) + ")")
        }
        return "(" + SQL.joined(alternatives, separator: " OR ") + ")"
    }

    /// Whether the referenced row passes its collection's read restriction; nil when every
    /// collection shows the caller everything. Restrictions never follow references themselves,
    /// and their unqualified columns are the referenced row's.
    private static func visibility(_ references: ReferenceAccess) throws(QueryError) -> SQL? {
        let restricted = references.collections.filter { $0.value.restriction != nil }
        guard !restricted.isEmpty || references.others.restriction != nil else { return nil }
        var branches: [SQL] = []
        for (collection, visibility) in references.collections.sorted(by: { $0.key < $1.key }) {
            let test = try visibility.restriction.map { (r) throws(QueryError) in
                try condition(r, references: nil)
            }
            branches.append("WHEN \(collection) THEN " + (test ?? "1"))
        }
        let others = try references.others.restriction.map { (r) throws(QueryError) in
            try condition(r, references: nil)
        }
        return "(CASE referenced.collection " + SQL.joined(branches, separator: " ") + " ELSE "
            + (others ?? "1") + " END)"
    }

    /// For an owner-only field of the referenced row's collection: only its creator's rows count.
    private static func ownerGuard(on field: String, _ references: ReferenceAccess) -> SQL? {
        let hiddenElsewhere = references.others.ownerOnlyFields.contains(field)
        guard
            hiddenElsewhere
                || references.collections.values.contains(where: { $0.ownerOnlyFields.contains(field) })
        else { return nil }
        let creator: SQL = references.viewer.map { "referenced.created_by IS \($0)" } ?? "0"
        var branches: [SQL] = []
        for (collection, visibility) in references.collections.sorted(by: { $0.key < $1.key }) {
            let hidden = visibility.ownerOnlyFields.contains(field)
            guard hidden || hiddenElsewhere else { continue }
            branches.append("WHEN \(collection) THEN " + (hidden ? creator : "1"))
        }
        return "(CASE referenced.collection " + SQL.joined(branches, separator: " ") + " ELSE "
            + (hiddenElsewhere ? creator : "1") + " END)"
    }

    private static func comparison(
        _ path: FieldPath, _ comparison: ComparisonOperator, _ literal: QueryLiteral
    ) throws(QueryError)
        -> SQL
    {
        if comparison == .ne { return "(NOT " + (try self.comparison(path, .eq, literal)) + ")" }
        let symbol: String =
            switch comparison {
            case .eq, .ne: "="
            case .lt: "<"
            case .lte: "<="
            case .gt: ">"
            case .gte: ">="
            }
        if comparison != .eq {
            switch literal {
            case .bool, .null:
                throw QueryError(
                    message: "\(comparison.rawValue) compares numbers or strings, not true, false or null",
                    column: 1, query: "",
                    expected: ["number", "string"])
            default: break
            }
        }
        if path.components.count == 1, let metadata = metadataColumns[path.components[0]] {
            let column = metadata.column
            switch literal {
            case .null: return comparison == .eq ? "(\(raw: column) IS NULL)" : "0"
            case .bool: return "0"
            case .string(let text):
                return metadata.isInteger ? "0" : "(\(raw: column) \(raw: symbol) \(text))"
            case .number(let number):
                return metadata.isInteger ? "(\(raw: column) \(raw: symbol) \(numberValue(number)))" : "0"
            }
        }
        let (column, field) = source(path)
        let value: SQL = "json_extract(\(raw: column), \(raw: field))"
        let type: SQL = "json_type(\(raw: column), \(raw: field))"
        switch literal {
        case .null:
            return "(" + type + " IS NULL OR " + type + " IS 'null')"
        case .bool(let flag):
            return "(" + type + (flag ? " IS 'true')" : " IS 'false')")
        case .string(let text):
            // json_extract gives TEXT for strings, and JSON text for objects and arrays, which starts
            // with '{' or '['; other texts can only equal a string, so the type check (a parse of the
            // whole document per row) is needed only for those and for ranges.
            if comparison == .eq, !text.hasPrefix("{"), !text.hasPrefix("[") {
                // IS, not =: a missing field must give false, never NULL, so that NOT works.
                return "(" + value + " IS \(text))"
            }
            return "(" + value + " \(raw: symbol) \(text) AND " + type + " IS 'text')"
        case .number(let number):
            // true and false come back as 1 and 0, so only those two need the type check for eq.
            if comparison == .eq, let double = Double(number), double != 0, double != 1 {
                return "(" + value + " IS \(numberValue(number)))"
            }
            return "(" + value + " \(raw: symbol) \(numberValue(number)) AND (" + type + " IS 'integer' OR "
                + type + " IS 'real'))"
        }
    }

    private static func contains(_ path: FieldPath, _ mode: ContainsMode, _ words: [String]) -> SQL {
        let (column, field) = source(path)
        let unique = Array(Set(words)).sorted()
        let list = SQL.joined(unique.map { "\($0)" }, separator: ", ")
        let arrayTest: SQL =
            mode == .any
            ? "EXISTS (SELECT 1 FROM json_each(\(raw: column), \(raw: field)) WHERE value IN (\(list)))"
            : "(SELECT count(DISTINCT value) FROM json_each(\(raw: column), \(raw: field)) WHERE value IN (\(list))) = \(unique.count)"
        let padded: SQL = "(' ' || json_extract(\(raw: column), \(raw: field)) || ' ')"
        let wordTests = unique.map { word -> SQL in "instr(" + padded + ", \(" " + word + " ")) > 0" }
        let stringTest = "(" + SQL.joined(wordTests, separator: mode == .any ? " OR " : " AND ") + ")"
        return "(CASE json_type(\(raw: column), \(raw: field)) WHEN 'array' THEN " + arrayTest
            + " WHEN 'text' THEN " + stringTest
            + " ELSE 0 END)"
    }

    /// The column a path reads and the JSON path within it: `ffACL.x` is `x` of the access list.
    static func source(_ path: FieldPath) -> (column: String, path: String) {
        guard path.components.count >= 2, path.components[0] == "ffACL",
            let rest = FieldPath(components: Array(path.components.dropFirst()))
        else { return ("document", jsonPath(path)) }
        return ("acl", jsonPath(rest))
    }

    /// `'$.a.b'` as SQL text; safe to write inline because every part is a validated identifier.
    static func jsonPath(_ path: FieldPath) -> String {
        "'$." + path.components.joined(separator: ".") + "'"
    }

    private static func numberValue(_ literal: String) -> DatabaseValue {
        if let integer = Int64(literal) { return .integer(integer) }
        return .real(Double(literal) ?? 0)
    }
}
