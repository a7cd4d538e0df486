import RoostStore

/// ``IdempotencyStore`` on PostgreSQL.
public typealias PostgresIdempotencyStore = SQLIdempotencyStore<PostgresDatabase>
