import Foundation
import RoostQuery
import RoostStore

/// The query compiler on PostgreSQL's SQL.
public typealias PostgresQueryCompiler = QueryCompiler<PostgresDialect>

/// PostgreSQL's SQL where it differs from SQLite's, with the answers SQLite gives.
///
/// Queries read `doc` (the document as jsonb) and `acl_doc` (the access list as jsonb); paths
/// (validated identifiers) are written inline as `'{a,b}'` so that expression indexes on them
/// apply. Semantics, as SQLite's:
/// - a comparison with a missing field or a value of another JSON type is false; `eq null`
///   matches a missing field or null; `ne` is `not eq`. Leaves on JSON values are never NULL
///   (`v IS NOT NULL AND …`); those on the nullable metadata columns (`createdBy`, `updatedBy`,
///   `ffACL`) are NULL where SQLite's are, so `not` excludes the same objects as in SQLite.
/// - strings compare by bytes (`COLLATE "C"`); numbers as SQLite holds them: an integer literal
///   within 64 bits exactly, any other as the double it rounds to (``PostgresSchemaFunctions``).
public enum PostgresDialect: SQLDialect {
    public static let trueLiteral: SQL = "true"
    public static let falseLiteral: SQL = "false"
    public static let greatest = "greatest"

    public static func regex(_ field: FieldPath, matching pattern: String) throws(QueryError) -> SQL {
        let translated = try PostgresRegex.translate(pattern)
        let value = source(field)
        return
            "(\(raw: value) IS NOT NULL AND jsonb_typeof(\(raw: value)) = 'string' AND (\(raw: value) #>> '{}') COLLATE roost_regex ~ \(translated))"
    }

    public static func jsonComparison(
        _ path: FieldPath, _ comparison: ComparisonOperator, symbol: String, _ literal: QueryLiteral
    ) -> SQL {
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

    public static func integerColumn(_ column: String, symbol: String, number: String) -> SQL {
        if let integer = Int64(number) { return "(\(raw: column) \(raw: symbol) \(integer))" }
        // An integer column against a double: exactly, as SQLite compares them.
        return "(\(raw: column)::numeric \(raw: symbol) \(exactDecimal(number))::numeric)"
    }

    public static func contains(_ path: FieldPath, _ mode: ContainsMode, _ words: [String]) -> SQL {
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

    public static func createdBy(_ viewer: String) -> SQL { "referenced.created_by = \(viewer)" }

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

extension PostgresDialect {
    /// The terms in the order SQLite's `json_extract` values sort: missing and null first, then
    /// numbers and booleans (as 0 and 1) by value, then strings, arrays and objects by their text
    /// in byte order. Numbers order by the double SQLite reads, then, for integers of equal
    /// doubles, exactly.
    public static func sortTerms(_ field: FieldPath, descending: Bool) -> [SQL] {
        let direction = direction(descending: descending)
        let value = "(doc #> \(jsonPath(field)))"
        let keys = [
            "(CASE jsonb_typeof(\(value)) WHEN 'number' THEN 1 WHEN 'boolean' THEN 1 WHEN 'string' THEN 2 WHEN 'array' THEN 2 WHEN 'object' THEN 2 ELSE 0 END)",
            "(CASE jsonb_typeof(\(value)) WHEN 'number' THEN roost_float8(\(value)) WHEN 'boolean' THEN (CASE WHEN \(value) = 'true'::jsonb THEN 1 ELSE 0 END) END)",
            // Ties of the double broken exactly, as SQLite compares integers (booleans are 0 and 1).
            """
            (CASE WHEN jsonb_typeof(\(value)) = 'boolean' THEN (CASE WHEN \(value) = 'true'::jsonb THEN 1 ELSE 0 END) \
            WHEN roost_is_integer(\(value)) THEN \(value)::numeric \
            WHEN roost_float8(\(value)) = trunc(roost_float8(\(value))) AND abs(roost_float8(\(value))) < 9.2e18 \
            THEN roost_float8(\(value))::int8::numeric END)
            """,
            "(CASE jsonb_typeof(\(value)) WHEN 'string' THEN \(value) #>> '{}' WHEN 'array' THEN \(value)::text WHEN 'object' THEN \(value)::text END) COLLATE \"C\"",
        ]
        return keys.map { SQL(stringLiteral: $0 + direction) }
    }

    public static func direction(descending: Bool) -> String {
        descending ? " DESC NULLS LAST" : " ASC NULLS FIRST"
    }

    public static func idRange(of collection: String) -> SQL {
        "SELECT min(id), max(id) FROM objects WHERE collection = \(collection)"
    }

    public static func accessFacts(of userGuid: String, in users: String) -> SQL {
        """
        SELECT coalesce(doc -> 'admin' = 'true'::jsonb, false)::int,
        ((doc -> 'active') IS DISTINCT FROM 'false'::jsonb)::int,
        (SELECT string_agg(group_guid, chr(31) ORDER BY group_guid) FROM group_members WHERE user_guid = \(userGuid))
        FROM objects WHERE collection = \(users) AND guid = \(userGuid)
        """
    }

    /// The change-log trigger runs at COMMIT and reads it from there. Set even when empty, so a
    /// role's or session's default never stands for who deleted; local to this transaction.
    public static func recordDeleter(_ actor: String?, collection: String, guid: String) -> (
        before: SQL?, after: SQL?
    ) {
        ("SELECT set_config('roost.actor', \(actor ?? ""), true)", nil)
    }

    /// A bigserial: ids are random, and created_at has milliseconds.
    public static let tokenIssueOrder = "issued"
    public static let tableNames =
        "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() AND table_name IN ('roost_schema', 'roost_meta')"
    public static let migrationTables = """
        CREATE TABLE IF NOT EXISTS roost_schema (version integer PRIMARY KEY, name text NOT NULL, applied_at bigint NOT NULL);
        CREATE TABLE IF NOT EXISTS roost_meta (key text PRIMARY KEY, value text NOT NULL);
        """
    public static let beginWrite = "BEGIN"
    public static let clock = "floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint"
    public static let lastChangeSequence = "(SELECT seq FROM change_counter WHERE id = 1)"
    public static let rowLock = " FOR UPDATE"

    public static func documentField(_ field: String, is literal: String) -> String {
        "doc -> '\(field)' = '\(literal)'::jsonb"
    }

    /// Transaction-level advisory locks; the class is the first key, the second a hash of the name.
    public static func lock(_ kind: TransactionLock, _ key: String, shared: Bool) -> SQL? {
        let function = shared ? "pg_advisory_xact_lock_shared" : "pg_advisory_xact_lock"
        return "SELECT \(raw: function)(\(kind.rawValue)::int4, hashtext(\(key)))"
    }
}
