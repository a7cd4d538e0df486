import Foundation
import RoostCore
@_spi(Testing) import RoostHTTP
import RoostJSON
import RoostScripts
import RoostStore
import Synchronization

/// A running Roost: the store, the services and the HTTP server wired together.
public final class Application: Sendable {
    public let configuration: ServerConfiguration
    private let server: HTTPServer
    private let tls: TLSContext?
    /// The plain listener that redirects to HTTPS, with `--redirect-http`.
    private let redirectServer: HTTPServer?
    private let storage: any Storage
    private let blobCollector: BlobCollector
    private let accounts: AccountService
    private let blobIO: BackgroundWorkers
    private let blobStorage: any BlobStorage
    private let sweeper = Mutex<Task<Void, Never>?>(nil)
    /// With a shared database, the app definition stored there.
    let sharedDefinitions: SharedDefinitionFollower?
    /// The realtime change feed behind `GET /ff/events`.
    public let changeFeed: ChangeFeed
    /// The app definition in force.
    public let definitions: AppDefinitionSource
    /// The pool of script worker processes.
    public let scriptRuntime: ScriptRuntime
    /// Runs ASYNC handlers from the change log.
    public let asyncHandlers: AsyncHandlerDispatcher
    /// Delivers the push outbox; nil when no provider is configured.
    public let pushDispatcher: PushDispatcher?
    /// Delivers the mail outbox; nil when no SMTP server is configured.
    public let mailDispatcher: MailDispatcher?
    /// Where everything the server has to say goes, besides the access log.
    public let logger: Logger
    /// Checks Apple's and Google's ID tokens; nil when no provider was configured at start.
    public let identityVerifier: (any IdentityTokenVerifier)?

    /// Opens the data folder and prepares the server; ``start()`` begins listening.
    /// Request bodies over this many bytes are admitted by their route when their head arrives.
    public static let bodiesCheckedAtTheirHeadOver = 64 * 1024

    /// `drivers` open the database and the blob store the configuration names: the program that
    /// composes the server chooses them (see `RoostDrivers`).
    public init(configuration: ServerConfiguration, drivers: any StorageDrivers) throws {
        self.configuration = configuration
        // First: a certificate problem is found before the database is touched.
        tls = try Self.loadTLS(configuration)
        let logger = Logger(
            level: configuration.logLevel, format: configuration.logFormat,
            sink: configuration.logSink ?? Logger.standardError)
        self.logger = logger
        definitions =
            try configuration.appDefinitionPath.map { path throws(AppDefinitionError) in
                try AppDefinitionSource(path: path)
            } ?? AppDefinitionSource(configuration.appDefinition)
        let storage = try drivers.openStorage(configuration)
        self.storage = storage
        sharedDefinitions = storage.sharedDefinitions.map { [definitions] store in
            SharedDefinitionFollower(store: store, definitions: definitions, logger: logger)
        }
        let metrics = HTTPMetrics()
        let accounts = AccountService(
            objects: storage.objectStore, accounts: storage.accountStore,
            hasher: configuration.passwordHasher,
            clock: configuration.clock, guids: configuration.guids,
            throttle: LoginThrottle(
                limits: configuration.loginLimits, clock: configuration.clock, failures: storage.loginFailures
            ),
            policy: configuration.sessionPolicy, tokenLifetime: Int64(configuration.tokenLifetime) * 1000,
            decoyHash: try configuration.passwordHasher.hashBlocking(Sodium.randomPassword()),
            definitions: definitions, refreshTokens: storage.refreshStore,
            refreshMode: configuration.refreshMode,
            accessTokenLifetime: Int64(configuration.accessTokenLifetime) * 1000,
            emailVerification: configuration.mail.email.verification)
        self.accounts = accounts
        let authenticator = Authenticator(
            accounts: accounts, adminAllowed: configuration.adminAllowed,
            system: try SystemLogin(password: configuration.systemPassword, accounts: accounts))
        let definitionChanges = DefinitionChanges(definitions: definitions, logger: logger)
        let requestIDs = RequestIDs(trustedProxies: configuration.trustedProxies)
        let boundary = ErrorBoundary(logger: logger, requestIDs: requestIDs)
        let table = RouteTable(Router(errorResponse: boundary.response))
        let routes = APIRoutes(
            table: table, authenticator: authenticator,
            idempotentWrites: IdempotentWrites(
                service: IdempotencyService(store: storage.idempotencyStore, clock: configuration.clock)),
            adminAllowed: configuration.adminAllowed)
        var objects = ObjectService(
            store: storage.objectStore, clock: configuration.clock, guids: configuration.guids,
            definitions: definitions)
        let pushDispatcher = Self.makePushDispatcher(configuration, storage: storage, logger: logger)
        self.pushDispatcher = pushDispatcher
        let push = PushService(
            store: storage.pushStore, accounts: storage.accountStore, objects: objects.withoutHooks(),
            clock: configuration.clock, guids: configuration.guids, isConfigured: pushDispatcher != nil,
            queued: { pushDispatcher?.wake() })
        PushRoutes(service: push).register(in: routes)
        let mailDispatcher = Self.makeMailDispatcher(configuration, storage: storage, logger: logger)
        self.mailDispatcher = mailDispatcher
        let emailAddresses = Self.registerMailRoutes(
            configuration, storage: storage, accounts: accounts, authenticator: authenticator,
            dispatcher: mailDispatcher, in: routes)
        let scriptServices = ScriptServices(
            push: ScriptPush(service: push, definitions: definitions),
            mail: Self.makeScriptMail(configuration, storage: storage, dispatcher: mailDispatcher),
            definitionChanges: definitionChanges)
        let scriptRuntime = Self.makeScriptRuntime(configuration, logger: logger)
        self.scriptRuntime = scriptRuntime
        let handlerRunner = Self.scriptHandlerRunner(
            configuration, runtime: scriptRuntime, objects: objects.withoutHooks(), accounts: accounts,
            definitions: definitions, services: scriptServices, logger: logger)
        objects.hooks = handlerRunner
        asyncHandlers = Self.makeAsyncHandlers(
            configuration, storage: storage, runtime: scriptRuntime, definitions: definitions,
            accounts: accounts,
            runner: handlerRunner, logger: logger)
        let blobStorage = try drivers.openBlobStorage(configuration)
        self.blobStorage = blobStorage
        let blobIO = BackgroundWorkers(
            threads: drivers.blobIOThreads(configuration), name: "roost-blob-io", lowPriority: false)
        self.blobIO = blobIO
        blobCollector = BlobCollector(storage: blobStorage, references: storage.objectStore, io: blobIO)
        let blobs = BlobService(objects: objects, storage: blobStorage, io: blobIO)
        ObjectRoutes(service: objects, blobs: BlobRoutes(service: blobs)).register(in: routes)
        AccountRoutes(
            accounts: accounts, authenticator: authenticator,
            registered: EmailAddressRoutes.registrationMail(emailAddresses, logger: logger)
        ).register(in: routes)
        RefreshRoutes(accounts: accounts).register(in: routes)
        // Always there (it starts on the first sign-in): a definition applied later, or read from
        // the shared database, may name a provider.
        let identityVerifier = drivers.identityVerifier(configuration)
        self.identityVerifier = identityVerifier
        SignInRoutes(
            service: SignInService(
                accounts: accounts, identities: storage.identityStore, verifier: identityVerifier,
                settings: configuration.signIn)
        ).register(in: routes)
        AdminRoutes(
            accounts: accounts,
            collections: CollectionAdministration(
                store: storage.collectionBrowser, limits: configuration.collectionListing)
        ).register(in: routes)
        changeFeed = ChangeFeed(
            log: storage.changeLog, definitions: definitions, limits: configuration.events,
            tokenIsLive: { [accounts] id in await accounts.tokenIsLive(id: id) },
            refreshCaller: { [accounts] caller in await accounts.refreshed(caller) },
            logger: { [logger] line in logger.error(line) })
        EventRoutes(feed: changeFeed).register(in: routes)
        Self.extensionRoutes(
            configuration, runtime: scriptRuntime, objects: objects.withoutHooks(), accounts: accounts,
            definitions: definitions, services: scriptServices, logger: logger
        ).register(in: routes)
        MetadataRoutes(definitions: definitions, changes: definitionChanges).register(in: routes)
        SystemRoutes(
            metrics: metrics, storage: storage, blobStorage: blobStorage, feed: changeFeed,
            scripts: scriptRuntime.metrics, asyncHandlers: asyncHandlers.metrics,
            push: pushDispatcher?.metrics, mail: mailDispatcher?.metrics,
            authenticator: authenticator, metricsAllowed: configuration.metricsAllowed
        ).register(in: routes)
        // Last: it describes the routes declared before it.
        OpenAPIRoutes().register(in: routes, table: table)
        var limits = RequestLimits(maxBodyBytes: configuration.maxBodyBytes)
        // Larger bodies wait at their head until the route has checked the caller: a request
        // refused anyway costs no read, no parse and no memory.
        limits.announcedBodiesOver = Self.bodiesCheckedAtTheirHeadOver
        let maxBlobBytes = configuration.maxBlobBytes
        let router = table.router
        assert(router.conflicts.isEmpty, "routes that can never be chosen: \(router.conflicts)")
        let appPrefix = configuration.appPrefix
        limits.streamedBodyLimit = { [definitions] head in
            // Routed as the router will see it, so that the request is routed once.
            let prefix = appPrefix ?? definitions.definition.hosting.appPrefix
            head.route = router.route(FatFractalDialect.removingAppPrefix(head, prefix))
            return head.route?.route.streamsBody == true ? maxBlobBytes : nil
        }
        var httpConfiguration = HTTPServer.Configuration(
            host: configuration.host, port: configuration.port, loopCount: configuration.loopCount,
            limits: limits,
            readTimeout: configuration.readTimeout,
            idleTimeout: configuration.idleTimeout, writeTimeout: configuration.writeTimeout,
            accessLog: configuration.accessLog
                ? (configuration.accessLogSink.map { AccessLog(format: configuration.logFormat, sink: $0) }
                    ?? AccessLog(format: configuration.logFormat)) : nil,
            errorBody: boundary.protocolResponse)
        httpConfiguration.trustedProxies = configuration.trustedProxies
        httpConfiguration.logger = logger
        httpConfiguration.bodySinks = { _ in try BlobUploadSink(storage: blobStorage) }
        httpConfiguration.maxConnections = configuration.maxConnections
        httpConfiguration.maxConnectionsPerClient = configuration.maxConnectionsPerClient
        httpConfiguration.tlsHandshakeTimeout = configuration.tlsHandshakeTimeout
        httpConfiguration.maxUploads = configuration.maxUploads
        httpConfiguration.maxUploadsPerClient = configuration.maxUploadsPerClient
        httpConfiguration.minimumUploadRate = configuration.minimumUploadRate
        httpConfiguration.maxUnsentBytes = configuration.maxUnsentBytes
        httpConfiguration.maxHeldRequestBytes = configuration.maxHeldRequestBytes
        httpConfiguration.tls = tls
        if !configuration.strictTransportSecurity { httpConfiguration.strictTransportSecurity = nil }
        // Outermost first: the dashboard owns `/_/` whatever else is configured; then the
        // dialect (app prefix, hosted files) sees the request as it came.
        let edge = MiddlewareChain(
            [
                DashboardHosting(allowed: configuration.adminAllowed),
                FatFractalDialect(
                    authenticator: authenticator, definitions: definitions,
                    configuredHosting: StaticHosting(directory: configuration.publicDirectory),
                    configuredPrefix: configuration.appPrefix),
                RequestIDMiddleware(requestIDs: requestIDs),
                CORSMiddleware(
                    policy: CORSPolicy(configuredOrigins: configuration.corsOrigins, definitions: definitions)
                ),
            ], around: router)
        let server = HTTPServer(
            configuration: httpConfiguration, responder: edge,
            metrics: metrics)
        self.server = server
        redirectServer = configuration.redirectHTTPPort.map { port in
            var redirect = HTTPServer.Configuration(
                host: configuration.host, port: port, loopCount: 1,
                readTimeout: configuration.readTimeout, idleTimeout: configuration.idleTimeout,
                errorBody: boundary.protocolResponse)
            redirect.maxConnections = configuration.maxConnections
            redirect.maxConnectionsPerClient = configuration.maxConnectionsPerClient
            return HTTPServer(
                configuration: redirect,
                responder: HTTPSRedirect(
                    httpsPort: { server.port }, errorBody: boundary.protocolResponse))
        }
        definitionChanges.connect { [weak self] change in try await self?.apply(change) }
    }

    private static func loadTLS(_ configuration: ServerConfiguration) throws -> TLSContext? {
        switch (configuration.tlsCertificatePath, configuration.tlsKeyPath) {
        case (let certificate?, let key?):
            return try TLSContext(certificatePath: certificate, keyPath: key)
        case (nil, nil):
            guard configuration.redirectHTTPPort == nil else {
                throw TLSConfigurationError(message: "--redirect-http needs --tls-cert and --tls-key")
            }
            return nil
        default:
            throw TLSConfigurationError(message: "--tls-cert and --tls-key go together; give both")
        }
    }

    /// Creates the definition's indexes, then starts listening; returns once connections are
    /// accepted.
    public func start() async throws {
        try await sharedDefinitions?.adopt()
        try await install(definitions.definition)
        sharedDefinitions?.start { [self] definition in try await install(definition) }
        try server.start()
        do {
            try redirectServer?.start()
        } catch {
            await server.shutdown()
            throw error
        }
        startBlobSweeps()
        changeFeed.start()
        asyncHandlers.start()
        pushDispatcher?.start()
        mailDispatcher?.start()
    }

    /// Every hour (and once at start), blob files nothing refers to for an hour are removed.
    private func startBlobSweeps() {
        let collector = blobCollector
        let logger = logger
        let task = Task.detached(priority: .background) {
            while !Task.isCancelled {
                do {
                    let report = try await collector.collect(minimumAge: 3600)
                    if report.removedBlobs + report.abandonedUploads > 0 {
                        logger.info(
                            "removed \(report.removedBlobs) unreferenced blob(s), \(report.removedBytes) bytes, and \(report.abandonedUploads) abandoned upload(s)"
                        )
                    }
                } catch {
                    logger.error("blob sweep failed: \(error)")
                }
                try? await Task.sleep(for: .seconds(3600))
            }
        }
        sweeper.withLock { $0 = task }
    }

    /// Re-reads the app definition file and puts it in force without dropping a connection; an
    /// invalid file throws and the running definition stays.
    @discardableResult
    public func reloadAppDefinition() async throws -> AppDefinition {
        guard let path = definitions.path else { return definitions.definition }
        if let sharedDefinitions {
            // Stored for every instance on the database, and in force here at once.
            return try await sharedDefinitions.publish(path: path) { [self] in try await install($0) }
        }
        let definition = try AppDefinitionSource.load(path)
        try await install(definition)
        definitions.replace(with: definition)
        return definition
    }

    /// What a definition needs before it is in force: its indexes and its groups.
    func install(_ definition: AppDefinition) async throws {
        // First: a script that does not compile leaves everything as it was.
        try await scriptRuntime.load(definition.scripts.modules)
        try await createIndexes(of: definition)
        try await createGroups(of: definition)
    }

    private func createIndexes(of definition: AppDefinition) async throws {
        for (collection, policy) in definition.collections where collection != "*" {
            for field in policy.indexes {
                try await storage.objectStore.createIndex(collection: collection, field: field)
            }
        }
    }

    /// Creates the definition's groups before its rules that name them are in force.
    private func createGroups(of definition: AppDefinition) async throws {
        for guid in try await accounts.ensureDeclaredGroups(of: definition) {
            logger.warn(
                "group '\(guid)' is declared in the app definition but a user who is not an administrator had created it; it now starts empty"
            )
        }
    }

    /// Reads the TLS certificate and key again: new connections get them, open ones keep theirs.
    /// A bad file throws and the running certificate stays. False without TLS.
    @discardableResult
    public func reloadTLS() throws -> Bool {
        guard let tls else { return false }
        try tls.reload()
        return true
    }

    /// The port listened on, useful when the configuration asked for port 0.
    public var port: Int { server.port }

    /// What the server committed, in order: the realtime feed's source, read by tools and tests.
    public var changeLog: any ChangeLog { storage.changeLog }

    /// Answers one request given as its wire bytes without a socket, through everything a
    /// connection's request goes through (see ``HTTPServer/exchange(_:from:)``): for tests.
    @_spi(Testing) public func exchange(_ bytes: [UInt8], from remoteAddress: String = "127.0.0.1") async
        -> [UInt8]
    {
        await server.exchange(bytes, from: remoteAddress)
    }

    /// Bytes of requests the server holds now: received and unanswered, and reserved for parsing.
    public var heldRequestBytes: Int { server.heldBytes.current }

    /// The plain-HTTP port that redirects to HTTPS, with ``ServerConfiguration/redirectHTTPPort``.
    public var redirectPort: Int? { redirectServer?.port }

    /// Whether the server speaks TLS.
    public var isSecure: Bool { tls != nil }

    /// Finishes requests in flight, then stops and joins everything it started: the blob sweeper, the change feed,
    /// the event loops, the blob workers, the database's writer and readers (closing every
    /// connection, which checkpoints the WAL and removes it).
    public func shutdown() async {
        await sharedDefinitions?.stop()
        let sweep = sweeper.withLock { task in
            defer { task = nil }
            return task
        }
        sweep?.cancel()
        await sweep?.value
        await redirectServer?.shutdown()
        // Streams end first, each told why; then the server drains what is left.
        await changeFeed.shutdown()
        await server.shutdown()
        // Before the storage closes: the dispatcher gives its lease back through the database.
        await asyncHandlers.stop()
        await pushDispatcher?.stop()
        await mailDispatcher?.stop()
        await identityVerifier?.shutdown()
        await scriptRuntime.shutdown()
        await blobIO.stop()
        blobStorage.close()
        await storage.close()
    }
}

extension Application {
    /// The push dispatcher when a sender is configured. As for ASYNC handlers, an embedded
    /// database's lease is the data folder's own, so a restart takes it back at once.
    static func makePushDispatcher(_ configuration: ServerConfiguration, storage: any Storage, logger: Logger)
        -> PushDispatcher?
    {
        guard let sender = configuration.push.sender else { return nil }
        var options = configuration.push.dispatch
        if configuration.databaseURL == nil { options.holder = "embedded" }
        return PushDispatcher(
            store: storage.pushStore, sender: sender, options: options, clock: configuration.clock,
            logger: { [logger] line in logger.error(line) })
    }
}
