import RoostStore

/// ``IdentityStore`` on the SQLite database.
public typealias SQLiteIdentityStore = SQLIdentityStore<SQLiteDatabase>
