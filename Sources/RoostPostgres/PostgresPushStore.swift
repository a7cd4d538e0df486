import RoostStore

/// ``PushStore`` on PostgreSQL, shared by every instance.
public typealias PostgresPushStore = SQLPushStore<PostgresDatabase>
