import RoostQuery

/// Metadata fields that have columns of their own, and whether each holds integers.
public let queryMetadataColumns: [String: (column: String, isInteger: Bool)] = [
    "guid": ("guid", false), "createdBy": ("created_by", false), "updatedBy": ("updated_by", false),
    "createdAt": ("created_at", true), "updatedAt": ("updated_at", true), "version": ("version", true),
    "ffACL": ("acl", false),
]

/// Compiles a ``QueryExpression`` to a condition on the `objects` table, once for every
/// database: the dialect writes the leaves (JSON values, regular expressions, references).
///
/// Every literal is a bound parameter. Field paths are validated identifiers, so the dialects
/// write them into the SQL, which lets expression indexes on them apply.
///
/// Semantics: a comparison with a missing field or a value of another JSON type is false;
/// `eq null` matches a missing field or null; `ne` is exactly `not eq`, so it matches objects that
/// lack the field. Strings compare by bytes, numbers as numbers (as SQLite holds them).
public enum QueryCompiler<Dialect: SQLDialect> {
    /// The condition. With `references`, a dotted path also matches through a referenced object
    /// that the caller may see (queries want this); without, paths stay inside the object (access
    /// rules must never look through references).
    public static func condition(_ expression: QueryExpression, references: ReferenceAccess? = .unrestricted)
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
            return try throughReferences(path, references) { (field) throws(QueryError) in
                try Dialect.regex(field, matching: pattern)
            }
        case .contains(let path, let mode, let words):
            return try throughReferences(path, references) { field in Dialect.contains(field, mode, words) }
        case .randomPick:
            return Dialect.trueLiteral
        case .constant(let flag):
            return flag ? Dialect.trueLiteral : Dialect.falseLiteral
        }
    }

    /// The predicate on `path` itself, or, for `a.b.c`, on `b.c` of the object that `a` refers to
    /// (and on `c` of the one `a.b` refers to): FatFractal's `(user.userName eq 'alice')`.
    /// One level of references; the referenced object is found through `object_refs`,
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
            // The reference's target was derived before the write (`object_refs`), so this is two
            // seeks and no URL is parsed.
            var target: SQL = """
                EXISTS (SELECT 1 FROM object_refs AS link JOIN objects AS referenced \
                ON referenced.collection = link.target_collection AND referenced.guid = link.target_guid \
                WHERE link.owner_collection = objects.collection AND link.owner_guid = objects.guid \
                AND link.path = \(prefix.description)
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
            branches.append("WHEN \(collection) THEN " + (test ?? Dialect.trueLiteral))
        }
        let others = try references.others.restriction.map { (r) throws(QueryError) in
            try condition(r, references: nil)
        }
        return "(CASE referenced.collection " + SQL.joined(branches, separator: " ") + " ELSE "
            + (others ?? Dialect.trueLiteral) + " END)"
    }

    /// For an owner-only field of the referenced row's collection: only its creator's rows count.
    private static func ownerGuard(on field: String, _ references: ReferenceAccess) -> SQL? {
        let hiddenElsewhere = references.others.ownerOnlyFields.contains(field)
        guard
            hiddenElsewhere
                || references.collections.values.contains(where: { $0.ownerOnlyFields.contains(field) })
        else { return nil }
        let creator: SQL = references.viewer.map { Dialect.createdBy($0) } ?? Dialect.falseLiteral
        var branches: [SQL] = []
        for (collection, visibility) in references.collections.sorted(by: { $0.key < $1.key }) {
            let hidden = visibility.ownerOnlyFields.contains(field)
            guard hidden || hiddenElsewhere else { continue }
            branches.append("WHEN \(collection) THEN " + (hidden ? creator : Dialect.trueLiteral))
        }
        return "(CASE referenced.collection " + SQL.joined(branches, separator: " ") + " ELSE "
            + (hiddenElsewhere ? creator : Dialect.trueLiteral) + " END)"
    }

    private static func comparison(
        _ path: FieldPath, _ comparison: ComparisonOperator, _ literal: QueryLiteral
    ) throws(QueryError) -> SQL {
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
                    column: 1, query: "", expected: ["number", "string"])
            default: break
            }
        }
        if path.components.count == 1, let metadata = queryMetadataColumns[path.components[0]] {
            let column = metadata.column
            switch literal {
            case .null: return comparison == .eq ? "(\(raw: column) IS NULL)" : Dialect.falseLiteral
            case .bool: return Dialect.falseLiteral
            case .string(let text):
                return metadata.isInteger ? Dialect.falseLiteral : "(\(raw: column) \(raw: symbol) \(text))"
            case .number(let number):
                return metadata.isInteger
                    ? Dialect.integerColumn(column, symbol: symbol, number: number) : Dialect.falseLiteral
            }
        }
        return Dialect.jsonComparison(path, comparison, symbol: symbol, literal)
    }
}
