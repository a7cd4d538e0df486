import RoostStore

/// Every store on one PostgreSQL database, shared by any number of Roost instances.
public final class PostgresStorage: Storage {
    public let database: PostgresDatabase
    public let objects: PostgresObjectStore
    public let accounts: PostgresAccountStore
    public let idempotencyKeys: PostgresIdempotencyStore
    public let changes: PostgresChangeLog
    public let outbox: PostgresScriptOutbox
    public let push: PostgresPushStore
    public let mail: PostgresMailStore
    public let refresh: PostgresRefreshStore
    public let identities: PostgresIdentityStore
    public let loginThrottle: PostgresLoginThrottleStore
    public let definitions: PostgresDefinitionStore
    /// Hears other instances' commits; nil for storage opened by a command, which needs none.
    public let listener: PostgresListener?

    public var objectStore: any ObjectStore & FieldIndexStore & BlobReferenceStore { objects }
    public var collectionBrowser: any CollectionBrowsing { objects }
    public var accountStore: any AccountStore { accounts }
    public var idempotencyStore: any IdempotencyStore { idempotencyKeys }
    public var changeLog: any ChangeLog { changes }
    public var scriptOutbox: any ScriptOutboxStore { outbox }
    public var pushStore: any PushStore { push }
    public var mailStore: any MailStore { mail }
    public var emailTokens: any EmailTokenStore { accounts }
    public var refreshStore: any RefreshStore { refresh }
    public var identityStore: any IdentityStore { identities }
    public var loginFailures: any LoginFailureStore { loginThrottle }
    public var sharedDefinitions: (any SharedDefinitionStore)? { definitions }

    /// Connects, migrates and starts the pool (blocking: at startup only). `listening` starts a
    /// connection that hears other instances' commits, which a server needs and a command not.
    /// `collections` are the domain's users and groups.
    public convenience init(
        configuration: PostgresConfiguration, collections: AccountCollections, listening: Bool = true
    ) throws {
        self.init(
            database: try PostgresDatabase(configuration: configuration, migrations: Self.migrations),
            collections: collections,
            listener: listening
                ? PostgresListener(
                    configuration: configuration,
                    channels: [PostgresChangeLog.channel, PostgresDefinitionStore.channel]) : nil)
    }

    /// Uses a database that is already connected and migrated with ``migrations``.
    public init(
        database: PostgresDatabase, collections: AccountCollections, listener: PostgresListener? = nil
    ) {
        self.database = database
        self.listener = listener
        objects = PostgresObjectStore(database: database, collections: collections)
        accounts = PostgresAccountStore(database: database, collections: collections)
        idempotencyKeys = PostgresIdempotencyStore(database: database)
        changes = PostgresChangeLog(database: database, listener: listener)
        outbox = PostgresScriptOutbox(database: database)
        push = PostgresPushStore(database: database)
        mail = PostgresMailStore(database: database)
        refresh = PostgresRefreshStore(database: database)
        identities = PostgresIdentityStore(database: database, collections: collections)
        loginThrottle = PostgresLoginThrottleStore(database: database)
        definitions = PostgresDefinitionStore(database: database, listener: listener)
    }

    public func metrics() -> String {
        """
        # HELP roost_postgres_jobs_running Statements and transactions running on a pooled connection now.
        # TYPE roost_postgres_jobs_running gauge
        roost_postgres_jobs_running \(database.runningJobs)
        # HELP roost_postgres_jobs_waiting Statements and transactions waiting for a pooled connection.
        # TYPE roost_postgres_jobs_waiting gauge
        roost_postgres_jobs_waiting \(database.queuedJobs)

        """
    }

    public func close() async {
        await listener?.stop()
        await database.close()
    }
}
