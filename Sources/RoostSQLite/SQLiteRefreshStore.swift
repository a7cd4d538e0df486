import RoostStore

/// ``RefreshStore`` on the SQLite database.
public typealias SQLiteRefreshStore = SQLRefreshStore<SQLiteDatabase>
