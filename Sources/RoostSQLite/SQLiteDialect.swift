import Foundation
import RoostQuery
import RoostStore

/// The query compiler on SQLite's SQL.
public typealias SQLiteQueryCompiler = QueryCompiler<SQLiteDialect>

/// SQLite's SQL where it differs from PostgreSQL's: `json_extract` and `json_type` on the
/// document's text, 1 and 0 for booleans, the `REGEXP` function Roost adds, no locks (one
/// writer).
public enum SQLiteDialect: SQLDialect {
    public static let trueLiteral: SQL = "1"
    public static let falseLiteral: SQL = "0"
    public static let greatest = "max"

    public static func regex(_ field: FieldPath, matching pattern: String) throws(QueryError) -> SQL {
        let (column, json) = source(field)
        return
            "(json_type(\(raw: column), \(raw: json)) IS 'text' AND json_extract(\(raw: column), \(raw: json)) REGEXP \(pattern))"
    }

    public static func jsonComparison(
        _ path: FieldPath, _ comparison: ComparisonOperator, symbol: String, _ literal: QueryLiteral
    ) -> SQL {
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

    public static func integerColumn(_ column: String, symbol: String, number: String) -> SQL {
        "(\(raw: column) \(raw: symbol) \(numberValue(number)))"
    }

    public static func contains(_ path: FieldPath, _ mode: ContainsMode, _ words: [String]) -> SQL {
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

    public static func createdBy(_ viewer: String) -> SQL { "referenced.created_by IS \(viewer)" }

    public static func sortTerms(_ field: FieldPath, descending: Bool) -> [SQL] {
        [
            "json_extract(document, \(raw: jsonPath(field)))"
                + SQL(stringLiteral: direction(descending: descending))
        ]
    }

    public static func direction(descending: Bool) -> String { descending ? " DESC" : " ASC" }

    /// Two subqueries, so that each is one seek on `objects_by_id`.
    public static func idRange(of collection: String) -> SQL {
        "SELECT (SELECT min(id) FROM objects WHERE collection = \(collection)), (SELECT max(id) FROM objects WHERE collection = \(collection))"
    }

    public static func accessFacts(of userGuid: String, in users: String) -> SQL {
        """
        SELECT json_extract(document, '$.admin') IS 1 AND json_type(document, '$.admin') = 'true',
        json_type(document, '$.active') IS NOT 'false',
        (SELECT group_concat(group_guid, char(31)) FROM group_members WHERE user_guid = \(userGuid))
        FROM objects WHERE collection = \(users) AND guid = \(userGuid)
        """
    }

    /// The trigger's entry for this delete: the newest delete of this object. Read from the
    /// log's end, where the trigger just wrote it, so the writer never scans the log.
    public static func recordDeleter(_ actor: String?, collection: String, guid: String) -> (
        before: SQL?, after: SQL?
    ) {
        guard let actor else { return (nil, nil) }
        return (
            nil,
            """
            UPDATE changes SET actor = \(actor) WHERE seq = (
                SELECT seq FROM changes
                WHERE collection = \(collection) AND guid = \(guid) AND operation = 'delete'
                ORDER BY seq DESC LIMIT 1)
            """
        )
    }

    public static let tokenIssueOrder = "rowid"
    public static let tableNames = "SELECT name FROM sqlite_schema WHERE type = 'table'"
    public static let migrationTables = """
        CREATE TABLE IF NOT EXISTS roost_schema (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL);
        CREATE TABLE IF NOT EXISTS roost_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
        """
    public static let beginWrite = "BEGIN IMMEDIATE"
    public static let clock = "CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)"
    /// One writer, and the newest entry is never trimmed: the row id is the sequence.
    public static let lastChangeSequence = "(SELECT max(seq) FROM changes)"
    public static let rowLock = ""

    public static func documentField(_ field: String, is literal: String) -> String {
        "json_type(document, '$.\(field)') = '\(literal)'"
    }

    /// One writer: nothing to lock.
    public static func lock(_ kind: TransactionLock, _ key: String, shared: Bool) -> SQL? { nil }

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
