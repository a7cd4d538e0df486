import RoostStore

/// ``IdentityStore`` on PostgreSQL, shared by every instance.
public typealias PostgresIdentityStore = SQLIdentityStore<PostgresDatabase>
