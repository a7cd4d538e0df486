import RoostStore

/// ``AccountStore`` on the same SQLite database as the objects.
public typealias SQLiteAccountStore = SQLAccountStore<SQLiteDatabase>
