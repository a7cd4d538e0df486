import Foundation
import RoostQuery
import RoostStore

/// Compiles a ``QueryExpression`` to a PostgreSQL condition on the `objects` table, with the
/// answers ``SQLiteObjectStore`` gives.
///
/// Queries read `doc` (the document as jsonb) and `acl_doc` (the access list as jsonb); every
/// literal is a bound parameter, and paths (validated identifiers) are written inline as `'{a,b}'`
/// so that expression indexes on them apply. Semantics, as SQLite's:
/// - a comparison with a missing field or a value of another JSON type is false; `eq null`
///   matches a missing field or null; `ne` is `not eq`. Leaves on JSON values are never NULL
///   (`v IS NOT NULL AND …`); those on the nullable metadata columns (`createdBy`, `updatedBy`,
///   `ffACL`) are NULL where SQLite's are, so `not` excludes the same objects as in SQLite.
/// - strings compare by bytes (`COLLATE "C"`); numbers as SQLite holds them: an integer literal
///   within 64 bits exactly, any other as the double it rounds to (``PostgresSchemaFunctions``).
enum PostgresQueryCompiler {
    /// Metadata fields with columns of their own, as in SQLite's compiler, and whether each holds integers.
    static let metadataColumns: [String: (column: String, isInteger: Bool)] = [
        "guid": ("guid", false), "createdBy": ("created_by", false), "updatedBy": ("updated_by", false),
        "createdAt": ("created_at", true), "updatedAt": ("updated_at", true), "version": ("version", true),
        "ffACL": ("acl", false),
    ]

    /// The condition. With `references`, a dotted path also matches through a referenced object
    /// the caller may see; without, paths stay inside the object (access rules).
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
            let translated = try PostgresRegex.translate(pattern)
            return try throughReferences(path, references) { field in
                let value = source(field)
                return
                    "(\(raw: value) IS NOT NULL AND jsonb_typeof(\(raw: value)) = 'string' AND (\(raw: value) #>> '{}') COLLATE roost_regex ~ \(translated))"
            }
        case .contains(let path, let mode, let words):
            return try throughReferences(path, references) { field in contains(field, mode, words) }
        case .randomPick:
            return "true"
        case .constant(let flag):
            return flag ? "true" : "false"
        }
    }

    /// The predicate on `path`, or on the rest of it inside the object a prefix refers to, as
    /// SQLite's compiler does: one level of references, each counting only when the caller may
    /// read the referenced object and, for an owner-only field, created it.
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
            // SQLite's substr(ffUrl, 15) and its split at the first '/', character for character.
            let url = "substr(objects.doc #>> \(jsonPath(prefix, appending: "ffUrl")), 15)"
            var target: SQL = """
                EXISTS (SELECT 1 FROM objects AS referenced WHERE \
                referenced.collection = substr(\(raw: url), 1, greatest(strpos(\(raw: url), '/') - 1, 0)) AND \
                referenced.guid = substr(\(raw: url), strpos(\(raw: url), '/') + 1)
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
    /// collection shows everything. Unqualified columns in it are the referenced row's.
    private static func visibility(_ references: ReferenceAccess) throws(QueryError) -> SQL? {
        let restricted = references.collections.filter { $0.value.restriction != nil }
        guard !restricted.isEmpty || references.others.restriction != nil else { return nil }
        var branches: [SQL] = []
        for (collection, visibility) in references.collections.sorted(by: { $0.key < $1.key }) {
            let test = try visibility.restriction.map { (r) throws(QueryError) in
                try condition(r, references: nil)
            }
            branches.append("WHEN \(collection) THEN " + (test ?? "true"))
        }
        let others = try references.others.restriction.map { (r) throws(QueryError) in
            try condition(r, references: nil)
        }
        return "(CASE referenced.collection " + SQL.joined(branches, separator: " ") + " ELSE "
            + (others ?? "true") + " END)"
    }

    /// For an owner-only field of the referenced row's collection: only its creator's rows count.
    private static func ownerGuard(on field: String, _ references: ReferenceAccess) -> SQL? {
        let hiddenElsewhere = references.others.ownerOnlyFields.contains(field)
        guard
            hiddenElsewhere
                || references.collections.values.contains(where: { $0.ownerOnlyFields.contains(field) })
        else { return nil }
        let creator: SQL = references.viewer.map { "referenced.created_by = \($0)" } ?? "false"
        var branches: [SQL] = []
        for (collection, visibility) in references.collections.sorted(by: { $0.key < $1.key }) {
            let hidden = visibility.ownerOnlyFields.contains(field)
            guard hidden || hiddenElsewhere else { continue }
            branches.append("WHEN \(collection) THEN " + (hidden ? creator : "true"))
        }
        return "(CASE referenced.collection " + SQL.joined(branches, separator: " ") + " ELSE "
            + (hiddenElsewhere ? creator : "true") + " END)"
    }

    private static func comparison(
        _ path: FieldPath, _ comparison: ComparisonOperator, _ literal: QueryLiteral
    ) throws(QueryError) -> SQL {
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
                    column: 1, query: "", expected: ["number", "string"])
            default: break
            }
        }
        if path.components.count == 1, let metadata = metadataColumns[path.components[0]] {
            let column = metadata.column
            switch literal {
            case .null: return comparison == .eq ? "(\(raw: column) IS NULL)" : "false"
            case .bool: return "false"
            case .string(let text):
                return metadata.isInteger ? "false" : "(\(raw: column) \(raw: symbol) \(text))"
            case .number(let number):
                guard metadata.isInteger else { return "false" }
                if let integer = Int64(number) { return "(\(raw: column) \(raw: symbol) \(integer))" }
                // An integer column against a double: exactly, as SQLite compares them.
                return "(\(raw: column)::numeric \(raw: symbol) \(exactDecimal(number))::numeric)"
            }
        }
        let value = source(path)
        switch literal {
        case .null:
            return "(\(raw: value) IS NULL OR \(raw: value) = 'null'::jsonb)"
        case .bool(let flag):
            return "(\(raw: value) IS NOT NULL AND \(raw: value) = '\(raw: flag ? "true" : "false")'::jsonb)"
        case .string(let text):
            // The text first, in the form a field index has, so that equality and ranges seek.
            return
                "(\(raw: Self.text(of: value)) \(raw: symbol) \(text) AND jsonb_typeof(\(raw: value)) = 'string' AND \(raw: value) IS NOT NULL)"
        case .number(let number):
            // An integer as an integer, else as the double SQLite would read, both sides. CASE,
            // not AND, guards the casts: the planner may reorder the conditions of a WHERE.
            let integer = "\(value)::numeric"
            return """
                (CASE WHEN jsonb_typeof(\(raw: value)) = 'number' THEN (CASE WHEN scale(\(raw: integer)) = 0 \
                AND \(raw: integer) BETWEEN -9223372036854775808 AND 9223372036854775807 \
                THEN \(raw: integer) \(raw: symbol) \(exactDecimal(number))::numeric \
                ELSE roost_float8(\(raw: value)) \(raw: symbol) \(doubleValue(number)) END) ELSE false END)
                """
        }
    }

    private static func contains(_ path: FieldPath, _ mode: ContainsMode, _ words: [String]) -> SQL {
        let value = source(path)
        let unique = Array(Set(words)).sorted()
        let list = SQL.joined(unique.map { "\($0)" }, separator: ", ")
        let element = "(element #>> '{}')"
        let matching: SQL =
            "FROM jsonb_array_elements(\(raw: value)) AS element WHERE jsonb_typeof(element) = 'string' AND \(raw: element) IN (\(list))"
        let arrayTest: SQL =
            mode == .any
            ? "EXISTS (SELECT 1 " + matching + ")"
            : "(SELECT count(DISTINCT \(raw: element)) " + matching + ") = \(unique.count)"
        let padded = "(' ' || (\(value) #>> '{}') || ' ')"
        let wordTests = unique.map { word -> SQL in "strpos(\(raw: padded), \(" " + word + " ")) > 0" }
        let stringTest = "(" + SQL.joined(wordTests, separator: mode == .any ? " OR " : " AND ") + ")"
        return "(CASE jsonb_typeof(\(raw: value)) WHEN 'array' THEN " + arrayTest + " WHEN 'string' THEN "
            + stringTest + " ELSE false END)"
    }

    /// The jsonb a path reads: `ffACL.x` is `x` of the access list.
    static func source(_ path: FieldPath) -> String {
        guard path.components.count >= 2, path.components[0] == "ffACL",
            let rest = FieldPath(components: Array(path.components.dropFirst()))
        else { return "(doc #> \(jsonPath(path)))" }
        return "(acl_doc #> \(jsonPath(rest)))"
    }

    /// The text of a JSON value in byte order: what field indexes hold and string comparisons read.
    static func text(of value: String) -> String {
        "((\(value) #>> '{}') COLLATE \"C\")"
    }

    /// `'{a,b}'` as SQL text; safe inline because every part is a validated identifier.
    static func jsonPath(_ path: FieldPath, appending last: String? = nil) -> String {
        "'{" + (path.components + (last.map { [$0] } ?? [])).joined(separator: ",") + "}'"
    }

    /// The literal's exact value as numeric text: an integer as written, any other number as
    /// the exact decimal expansion of the double it rounds to (what SQLite compares).
    static func exactDecimal(_ literal: String) -> DatabaseValue {
        if let integer = Int64(literal) { return .text(String(integer)) }
        let double = Double(literal) ?? 0
        guard double.isFinite else { return .text(double < 0 ? "-Infinity" : "Infinity") }
        var buffer = [CChar](repeating: 0, count: 1600)
        _ = withVaList([double]) { vsnprintf(&buffer, buffer.count, "%.1100f", $0) }
        var text = String(cString: buffer)
        while text.hasSuffix("0") { text.removeLast() }
        if text.hasSuffix(".") { text.removeLast() }
        return .text(text == "-0" ? "0" : text)
    }

    /// The literal as a double; an integer literal beyond 2^53 rounds here (SQLite compares
    /// those exactly with stored doubles: one of the documented differences).
    static func doubleValue(_ literal: String) -> DatabaseValue {
        .real(Double(literal) ?? 0)
    }
}
