import RoostStore

/// ``RefreshStore`` on PostgreSQL, shared by every instance.
public typealias PostgresRefreshStore = SQLRefreshStore<PostgresDatabase>
