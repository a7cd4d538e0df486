import RoostStore

/// ``ObjectStore`` on PostgreSQL, answering as SQLite's does: writes run in READ COMMITTED
/// transactions guarded by the object's version, so concurrent instances never overwrite each
/// other's changes; a page and its total share one snapshot.
public typealias PostgresObjectStore = SQLObjectStore<PostgresDatabase>
