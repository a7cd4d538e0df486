import RoostStore

/// The migrator on SQLite; the writer applies the migrations at open (``SQLiteDatabase``).
typealias SQLiteMigrator = Migrator<SQLiteConnection>
