import RoostStore

/// ``PushStore`` on the SQLite database.
public typealias SQLitePushStore = SQLPushStore<SQLiteDatabase>
