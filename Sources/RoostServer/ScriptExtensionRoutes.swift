import RoostCore
import RoostHTTP
import RoostJSON
import RoostScripts
import RoostStore

/// `/ff/ext/<name>` (any method, and under the app prefix): runs the definition's extension of
/// that name and answers in FatFractal's shape (see ``ScriptExtensionAnswer``).
///
/// An unknown name is 404 and an anonymous caller of a secured extension 401, both before any
/// script work. These answers, and every refusal, reach clients in the dialect's error envelope
/// (`statusMessage`): the dialect treats `/ff/ext/` as its own whatever the client.
struct ScriptExtensionRoutes: Sendable {
    static let pattern = "/ff/ext/:name"
    /// Bytes of request body an extension receives. Its text travels as a JSON string in the
    /// message to the worker, where escaping can make it up to six times larger (control bytes);
    /// a message over the 16 MiB frame is refused with 413 `script_data_too_large`.
    static let maxContentBytes = 4 << 20

    /// Runs one invocation: the runtime's `invoke`, or a stand-in in tests.
    typealias Invoke = @Sendable (ScriptInvocation, any ScriptCallHandling) async throws -> ScriptOutcome

    let invoke: Invoke
    /// The object service whose writes run no handlers.
    let objects: ObjectService
    let accounts: AccountService
    let definitions: AppDefinitionSource
    let logger: Logger
    /// This app's public address for `getHttpAppAddress()` (`https://host[/prefix]`); nil takes
    /// it from the request's scheme and `Host`, which a client controls: configure it when
    /// scripts put it in mail.
    let appAddress: String?
    /// `--app-prefix`, which wins over the definition's `hosting.appPrefix`, for the address.
    let configuredPrefix: String?
    let limits: FatFractalScriptAPI.Limits
    /// Extension runs one caller (a user, or an address for anonymous callers) may have in
    /// progress, running or waiting for a worker: one caller cannot take the whole pool.
    let runsPerCaller: Int
    let runs = ClientSlots()
    /// What the scripts' push and mail calls reach.
    var services = ScriptServices()

    init(
        runtime: ScriptRuntime, objects: ObjectService, accounts: AccountService,
        definitions: AppDefinitionSource,
        logger: Logger, appAddress: String? = nil, configuredPrefix: String? = nil,
        limits: FatFractalScriptAPI.Limits = .init(), runsPerCaller: Int = 4,
        services: ScriptServices = ScriptServices()
    ) {
        self.init(
            invoke: { try await runtime.invoke($0, calls: $1) }, objects: objects, accounts: accounts,
            definitions: definitions, logger: logger, appAddress: appAddress,
            configuredPrefix: configuredPrefix,
            limits: limits, runsPerCaller: runsPerCaller)
        self.services = services
    }

    init(
        invoke: @escaping Invoke, objects: ObjectService, accounts: AccountService,
        definitions: AppDefinitionSource,
        logger: Logger, appAddress: String? = nil, configuredPrefix: String? = nil,
        limits: FatFractalScriptAPI.Limits = .init(), runsPerCaller: Int = 4
    ) {
        self.runsPerCaller = max(1, runsPerCaller)
        self.invoke = invoke
        self.objects = objects
        self.accounts = accounts
        self.definitions = definitions
        self.logger = logger
        self.appAddress = appAddress
        self.configuredPrefix = configuredPrefix
        self.limits = limits
    }

    func register(in routes: APIRoutes) {
        for method in [HTTPMethod.get, .post, .put, .patch, .delete] {
            routes.api.on(method, Self.pattern, admit: { _ = try admitted($0, $1.principal) }) {
                try await run($0, $1.principal)
            }
        }
    }

    /// The extension a request names, when its caller may run it with a body of that size;
    /// checked again when the whole request is in, and first when a large body's head arrives.
    private func admitted(_ request: Request, _ caller: Principal?) throws -> ScriptExtension {
        let name = try request.parameters.require("name")
        guard let scriptExtension = definitions.definition.scripts.extensions[name] else {
            throw RoostError(
                status: 404, code: .notFound, message: "This app has no extension '\(name.prefix(100))'.",
                details: JSONObject(uniqueMembers: [("extension", .string(String(name.prefix(100))))]))
        }
        if scriptExtension.secured, caller == nil { throw RoostError.loginRequired }
        let declared = request.headers["Content-Length"].flatMap { Int($0) } ?? 0
        guard max(request.body.count, declared) <= Self.maxContentBytes else {
            throw RoostError(
                status: 413, code: .bodyTooLarge,
                message: "An extension takes at most \(Self.maxContentBytes >> 20) MiB of request body.")
        }
        return scriptExtension
    }

    func run(_ request: Request, _ caller: Principal?) async throws -> Response {
        let name = try request.parameters.require("name")
        let scriptExtension = try admitted(request, caller)
        let runner =
            caller.map { "user " + $0.userGuid } ?? "address " + clientKey(forAddress: request.remoteAddress)
        guard runs.acquire(runner, total: .max, perClient: runsPerCaller) else {
            throw RoostError.tooManyScriptRuns(runsPerCaller)
        }
        defer { runs.release(runner) }
        let data = JSONValue.object(ScriptExtensionRequest.data(of: request, caller: caller))
        let address =
            appAddress
            ?? ScriptExtensionRequest.appAddress(
                of: request, prefix: configuredPrefix ?? definitions.definition.hosting.appPrefix)
        var context = JSONObject()
        context["appAddress"] = .string(address)
        context["eventId"] = .null
        context["requestId"] = .string(request.requestID)
        var calls = FatFractalScriptAPI(
            objects: objects, accounts: accounts,
            rights: FatFractalScriptAPI.rights(scriptExtension.rights, caller: caller), activeCaller: caller,
            appAddress: address,
            requestID: request.requestID, scriptName: name, logger: logger, limits: limits)
        calls.services = services
        var invocation = ScriptInvocation(
            kind: .extension, name: name, entry: scriptExtension.entry, data: data, context: context)
        invocation.owner = runner
        let outcome = try await invoke(invocation, calls)
        do {
            return Self.hardened(try ScriptExtensionAnswer.response(outcome))
        } catch let problem as ScriptExtensionAnswer.Problem {
            logger.error(
                "extension '\(name)' answered badly: \(problem.reason)", requestID: request.requestID,
                fields: [("script", name)])
            throw RoostError.scriptFailed(name)
        }
    }
}

extension ScriptExtensionRoutes {
    /// What an extension's HTML may load: its own origin's resources, no plug-ins, no inline
    /// script (a script that echoes what a caller sent cannot be turned against the app's users).
    static let htmlContentSecurityPolicy =
        "default-src 'self'; object-src 'none'; base-uri 'self'; form-action 'self'; frame-ancestors 'self'"

    /// An extension's answer as sent: never sniffed into another type, and under
    /// ``htmlContentSecurityPolicy`` whatever its type (SVG and XML run script too; a policy on
    /// JSON costs nothing).
    static func hardened(_ response: Response) -> Response {
        var response = response
        response.headers.set("X-Content-Type-Options", "nosniff")
        if response.headers["Content-Security-Policy"] == nil {
            response.headers.set("Content-Security-Policy", htmlContentSecurityPolicy)
        }
        return response
    }
}

extension FatFractalDialect {
    /// Whether the answer is an extension's own, already in FatFractal's shape: errors on that
    /// route still go through the envelope.
    static func isExtensionAnswer(_ response: Response) -> Bool {
        response.route == ScriptExtensionRoutes.pattern && response.status < 400
    }

    /// `/ff/ext/…` speaks the dialect whatever the client: extensions are FatFractal's.
    static func isExtensionPath(_ path: Substring) -> Bool { path.hasPrefix("/ff/ext/") }
}
