import RoostStore

/// ``MailStore`` on PostgreSQL, shared by every instance.
public typealias PostgresMailStore = SQLMailStore<PostgresDatabase>
