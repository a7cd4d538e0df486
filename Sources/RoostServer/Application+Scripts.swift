import Foundation
import RoostCore
import RoostHTTP
import RoostJSON
import RoostScripts
import RoostStore

/// How server-side scripts run (`--script-*` options).
public struct ScriptOptions: Sendable {
    /// The program a worker runs (`<it> script-worker`); nil is this process's own binary.
    public var workerExecutable: String?
    /// Worker processes; four per core by default, since a script mostly waits for its data
    /// calls (measured on 2 cores: 8 workers ran 1.4× the handler runs of 2).
    public var workers = min(64, 4 * ProcessInfo.processInfo.activeProcessorCount)
    /// Seconds a script may run, its data calls included.
    public var timeout: Double = 5
    /// Bytes of JavaScript heap a worker may hold.
    public var memoryLimit = 64 << 20
    /// Extension calls one caller (a user, or an address for anonymous callers) may have in
    /// progress; nil is half the workers (at least 2), so one caller cannot take them all.
    public var runsPerCaller: Int?
    /// Whom workers run as when the server is root (`--script-user`); nil is `nobody`.
    public var user: String?

    /// Whether the system knows `name` as a user other than root (`--script-user` checks it).
    public static func isKnownWorkerUser(_ name: String) -> Bool { ScriptWorkerUser.named(name) != nil }

    /// ``runsPerCaller`` as it applies.
    public var effectiveRunsPerCaller: Int { runsPerCaller ?? max(2, workers / 2) }

    public init() {}
}

extension Application {
    static func makeScriptRuntime(_ configuration: ServerConfiguration, logger: Logger) -> ScriptRuntime {
        let options = configuration.scripts
        let executable =
            options.workerExecutable
            ?? (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
            ?? CommandLine.arguments[0]
        var runtime = ScriptRuntime.Configuration(workerExecutable: executable, workers: options.workers)
        runtime.timeout = options.timeout
        runtime.memoryLimit = options.memoryLimit
        if runtime.workerUser != nil, let name = options.user {
            // Checked when the flag was read; a user gone since falls back to nobody, never root.
            if let user = ScriptWorkerUser.named(name) {
                runtime.workerUser = user
            } else {
                logger.error("the script user '\(name)' is unknown: script workers run as nobody")
            }
        }
        return ScriptRuntime(configuration: runtime, log: { [logger] line in logger.error(line) })
    }

    static func scriptHandlerRunner(
        _ configuration: ServerConfiguration, runtime: ScriptRuntime, objects: ObjectService,
        accounts: AccountService, definitions: AppDefinitionSource,
        services: ScriptServices = ScriptServices(),
        logger: Logger
    ) -> ScriptHandlerRunner {
        let scheme = configuration.tlsCertificatePath == nil ? "http" : "https"
        let prefix =
            configuration.appPrefix.map { "/" + $0.trimmingCharacters(in: CharacterSet(charactersIn: "/")) }
            ?? ""
        let address = "\(scheme)://\(configuration.host):\(configuration.port)\(prefix)"
        return ScriptHandlerRunner(
            invoke: { try await runtime.invoke($0, calls: $1) }, definitions: definitions, objects: objects,
            accounts: accounts,
            makeCalls: scriptCallsFactory(
                objects: objects, accounts: accounts, appAddress: address, services: services, logger: logger),
            appAddress: address, logger: logger)
    }

    /// `/ff/ext/<name>`: the app's extensions; a script creates objects no larger than a request body.
    static func extensionRoutes(
        _ configuration: ServerConfiguration, runtime: ScriptRuntime, objects: ObjectService,
        accounts: AccountService, definitions: AppDefinitionSource, services: ScriptServices, logger: Logger
    ) -> ScriptExtensionRoutes {
        var limits = FatFractalScriptAPI.Limits()
        limits.maxObjectBytes = configuration.maxBodyBytes
        return ScriptExtensionRoutes(
            runtime: runtime, objects: objects, accounts: accounts, definitions: definitions, logger: logger,
            configuredPrefix: configuration.appPrefix, limits: limits,
            runsPerCaller: configuration.scripts.effectiveRunsPerCaller, services: services)
    }

    /// The `ff` API host for one handler run.
    static func scriptCallsFactory(
        objects: ObjectService, accounts: AccountService, appAddress: String,
        services: ScriptServices = ScriptServices(), logger: Logger
    ) -> ScriptCallsFactory {
        { caller, rights, name, replaced, requestID in
            var api = FatFractalScriptAPI(
                objects: objects, accounts: accounts,
                rights: FatFractalScriptAPI.rights(rights, caller: caller), activeCaller: caller,
                appAddress: appAddress, requestID: requestID, scriptName: name, logger: logger)
            api.replacedObject = replaced
            api.services = services
            return api
        }
    }
}

extension Application {
    /// ASYNC handlers, run from the change log by ``AsyncHandlerDispatcher``. Their data calls
    /// carry the rights of the user who made the change: its `updatedBy`, or for a delete the
    /// deleter the log recorded (anonymous when none did, as for an administrator's command).
    static func makeAsyncHandlers(
        _ configuration: ServerConfiguration, storage: any Storage, runtime: ScriptRuntime,
        definitions: AppDefinitionSource, accounts: AccountService, runner: ScriptHandlerRunner,
        logger: Logger
    ) -> AsyncHandlerDispatcher {
        var options = AsyncDispatchOptions()
        if configuration.databaseURL == nil {
            // One server at a time opens a data folder (its lock says so), so a lease left by a
            // server that was killed is this folder's own: a restart takes it back at once
            // instead of waiting for it to lapse.
            options.holder = "embedded"
        }
        // Half the pool: PRE and POST handlers and extensions keep the rest.
        options.concurrency = max(1, configuration.scripts.workers / 2)
        options.lease = AsyncDispatchOptions.lease(for: runtime.configuration)
        let withholdsAdmin = configuration.adminAllowed != nil
        return AsyncHandlerDispatcher(
            outbox: storage.scriptOutbox, log: storage.changeLog, options: options,
            handlers: { [definitions] in definitions.definition.scripts.handlers },
            logger: { [logger] line in logger.error(line) },
            run: { handler, change in
                let deleted = change.operation == .delete
                guard let document = deleted ? change.previousDocument : change.document,
                    case .object(let object) = try JSONParser.parse(document)
                else { return }
                var actor: Principal?
                if let guid = deleted ? change.deletedBy : object["updatedBy"]?.stringValue,
                    guid != FatFractalScriptAPI.systemPrincipal.userGuid
                {
                    actor = await accounts.refreshed(Principal(userGuid: guid, tokenId: "async-handler"))
                    // The write's address is not kept: under `--admin-allow` an administrator's
                    // ASYNC handlers run as an ordinary user's, whichever address wrote.
                    if withholdsAdmin { actor = actor?.withholdingAdmin() }
                }
                let data = FatFractalWire.wireObject(object, mayEdit: { _, _, _ in true })
                var context = JSONObject()
                context["appAddress"] = .string(runner.appAddress)
                let eventID = AsyncHandlerDispatcher.eventID(of: change)
                context["eventId"] = .string(eventID)
                context["event"] = .string(change.operation.rawValue)
                var invocation = ScriptInvocation(
                    kind: .handler, name: handler.name, entry: handler.entry, data: data, context: context)
                // In the pool too, a user's ASYNC runs take their turn with everyone else's.
                invocation.owner = actor.map { "user " + $0.userGuid } ?? ""
                invocation.committed = true
                _ = try await runtime.invoke(
                    invocation,
                    calls: runner.makeCalls(
                        actor, handler.rights, handler.name,
                        change.operation == .update
                            ? change.previousDocument.flatMap(ScriptHandlerRunner.wire) : nil,
                        // No request caused it: its lines carry the event's id instead.
                        eventID))
            })
    }
}
