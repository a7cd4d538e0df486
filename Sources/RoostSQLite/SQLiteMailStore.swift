import RoostStore

/// ``MailStore`` on the SQLite database.
public typealias SQLiteMailStore = SQLMailStore<SQLiteDatabase>
