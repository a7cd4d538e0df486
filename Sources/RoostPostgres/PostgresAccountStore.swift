import RoostStore

/// ``AccountStore`` on the same PostgreSQL database as the objects.
public typealias PostgresAccountStore = SQLAccountStore<PostgresDatabase>
