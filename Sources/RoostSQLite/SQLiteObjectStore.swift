import Foundation
import RoostQuery
import RoostStore

/// ``ObjectStore`` on the embedded SQLite database in the data folder.
public typealias SQLiteObjectStore = SQLObjectStore<SQLiteDatabase>

extension SQLObjectStore where Database == SQLiteDatabase {
    /// Opens `roost.sqlite` in `directory` on its own; ``SQLiteStorage`` opens it for every store.
    public convenience init(
        directory: String, collections: AccountCollections, durability: Durability = .normal
    ) throws {
        self.init(
            database: try SQLiteStorage.openDatabase(directory: directory, durability: durability),
            collections: collections)
    }
}

/// Field indexes are expression indexes on the JSON value, named `field:collection:path`, so
/// that equality and range queries on them seek instead of scan; the catalog lists them.
extension SQLiteConnection {
    public func createFieldIndex(_ index: FieldIndex, on field: FieldPath) throws {
        // Both names are validated identifiers, so writing them into the DDL is safe.
        try execute(
            """
            CREATE INDEX IF NOT EXISTS "\(index.name)"
            ON objects (collection, json_extract(document, \(SQLiteDialect.jsonPath(field))))
            """)
    }

    public func dropFieldIndex(_ index: FieldIndex) throws -> Bool {
        let exists =
            try first("SELECT 1 FROM sqlite_master WHERE type = 'index' AND name = \(index.name)") { _ in true
            }
            ?? false
        if exists { try execute("DROP INDEX \"\(index.name)\"") }
        return exists
    }

    public func fieldIndexes() throws -> [FieldIndex] {
        try query("SELECT name FROM sqlite_master WHERE type = 'index' AND name LIKE 'field:%' ORDER BY name")
        {
            row -> FieldIndex? in
            let parts = (row.text(0) ?? "").split(separator: ":")
            guard parts.count == 3 else { return nil }
            return FieldIndex(name: row.text(0) ?? "", collection: String(parts[1]), field: String(parts[2]))
        }.compactMap { $0 }
    }
}
