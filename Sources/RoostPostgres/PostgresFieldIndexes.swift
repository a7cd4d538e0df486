import RoostQuery
import RoostStore

/// Expression indexes on JSON fields, named as SQLite's (`field:collection:path`), listed in
/// `field_indexes` (PostgreSQL keeps 63 bytes of a name).
extension PostgresConnection {
    /// On the field's text in byte order, so that it serves equality and ranges on strings, as
    /// SQLite's serves them, then on `id`, as SQLite's rowid ends each of its indexes: a page in
    /// creation order of the objects equal to a value reads its rows in order and stops at the
    /// page's end (measured: 27 ms to 0.16 ms for 20 of 5,000 matches).
    public func createFieldIndex(_ index: FieldIndex, on field: FieldPath) throws {
        let physical = Self.physicalName(index.name)
        // Instances creating the same index at once wait for each other.
        try lock(.fieldIndex, index.name)
        // Both names are validated identifiers, so writing them into the DDL is safe.
        try execute(
            """
            CREATE INDEX IF NOT EXISTS "\(physical)"
            ON objects (collection, \(PostgresDialect.text(of: PostgresDialect.source(field))), id)
            """)
        try run(
            """
            INSERT INTO field_indexes (name, collection, field, index_name)
            VALUES (\(index.name), \(index.collection), \(index.field), \(physical)) ON CONFLICT DO NOTHING
            """)
    }

    public func dropFieldIndex(_ index: FieldIndex) throws -> Bool {
        let existed = try run("DELETE FROM field_indexes WHERE name = \(index.name)") > 0
        try execute("DROP INDEX IF EXISTS \"\(Self.physicalName(index.name))\"")
        return existed
    }

    public func fieldIndexes() throws -> [FieldIndex] {
        try query("SELECT name, collection, field FROM field_indexes ORDER BY name") { row in
            FieldIndex(name: row.text(0) ?? "", collection: row.text(1) ?? "", field: row.text(2) ?? "")
        }
    }

    /// PostgreSQL keeps 63 bytes of a name: a longer one becomes `field:#` and a 64-bit FNV-1a hash.
    static func physicalName(_ name: String) -> String {
        guard name.utf8.count > 63 else { return name }
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in name.utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01B3 }
        let hex = String(hash, radix: 16)
        return "field:#" + String(repeating: "0", count: 16 - hex.count) + hex
    }
}
