import RoostStore

/// ``IdempotencyStore`` on the Roost SQLite database.
public typealias SQLiteIdempotencyStore = SQLIdempotencyStore<SQLiteDatabase>
