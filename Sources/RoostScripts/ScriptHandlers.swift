import RoostCore
import RoostJSON
import RoostStore

/// Makes the `ff` API host a handler's data calls go through: with the rights of `caller` (or of
/// the system, as the handler declares); `name` is the handler's, for its log lines; `replaced`
/// is the object an update replaced, in the wire shape (`ff.getUpdateEventHandlerData()`'s `old`);
/// `requestID` is what the script's log lines carry (the request's, or an ASYNC run's event id).
public typealias ScriptCallsFactory =
    @Sendable (
        _ caller: Principal?, _ rights: ScriptRights, _ name: String, _ replaced: JSONValue?,
        _ requestID: String
    ) -> any ScriptCallHandling

/// Runs the app's PRE and POST handlers around object writes (the object service asks it; see
/// ``ObjectWriteHooks``). Each handler sees the object in FatFractal's wire shape, as
/// `ff.getEventHandlerData()` and as the `FF_EVENT_DATA_JSON` text.
public struct ScriptHandlerRunner: ObjectWriteHooks {
    /// Runs an invocation in the script pool (``ScriptRuntime/invoke(_:calls:)``).
    let invoke: @Sendable (ScriptInvocation, any ScriptCallHandling) async throws -> ScriptOutcome
    let definitions: AppDefinitionSource
    /// Reads the caller's FFUser for `ff.getActiveUser()`; its writes run no handler.
    let objects: ObjectService
    let accounts: AccountService
    public let makeCalls: ScriptCallsFactory
    public let appAddress: String
    let logger: any ScriptLog

    public init(
        invoke: @escaping @Sendable (ScriptInvocation, any ScriptCallHandling) async throws -> ScriptOutcome,
        definitions: AppDefinitionSource, objects: ObjectService, accounts: AccountService,
        makeCalls: @escaping ScriptCallsFactory, appAddress: String, logger: any ScriptLog
    ) {
        self.invoke = invoke
        self.definitions = definitions
        self.objects = objects
        self.accounts = accounts
        self.makeCalls = makeCalls
        self.appAddress = appAddress
        self.logger = logger
    }

    public func runs(_ phase: ScriptHandler.Phase, on event: ScriptHandler.Event, in collection: String)
        -> Bool
    {
        let handlers = definitions.definition.scripts.handlers
        return !handlers.isEmpty
            && handlers.contains {
                $0.phase == phase && $0.collection == collection && $0.events.contains(event)
            }
    }

    public func beforeWrite(
        _ event: ScriptHandler.Event, object: StoredObject, previous: StoredObject?, caller: Principal?,
        origin: WriteOrigin?
    ) async throws -> JSONObject? {
        let handlers = definitions.definition.scripts.handlers(for: event, in: object.collection, phase: .pre)
        guard case .object(let document) = try JSONParser.parse(object.document) else { return nil }
        var data = FatFractalWire.wireObject(document, mayEdit: { _, _, _ in true })
        for handler in handlers {
            let outcome = try await run(
                handler, event: event, data: data, object: object, previous: previous, caller: caller,
                origin: origin)
            if case .object? = outcome.eventData { data = outcome.eventData! }
        }
        guard case .object(let changed) = data, event != .delete else { return nil }
        var fields = FatFractalWire.lenientBody(changed, updating: object.guid)
        // The wire shape adds `clazz`; it is kept only when the object had one.
        if document["clazz"] == nil, fields["clazz"]?.stringValue == object.collection {
            fields["clazz"] = nil
        }
        return fields
    }

    public func afterWrite(
        _ event: ScriptHandler.Event, object: StoredObject, previous: StoredObject?, caller: Principal?,
        origin: WriteOrigin?
    ) async {
        let handlers = definitions.definition.scripts.handlers(
            for: event, in: object.collection, phase: .post)
        guard case .object(let document)? = try? JSONParser.parse(object.document) else { return }
        let data = FatFractalWire.wireObject(document, mayEdit: { _, _, _ in true })
        for handler in handlers {
            do {
                _ = try await run(
                    handler, event: event, data: data, object: object, previous: previous, caller: caller,
                    origin: origin)
            } catch {
                // The write is committed: a POST handler's failure is the server's to report, not the client's.
                logger.failure(
                    "POST handler '\(handler.name)' failed on \(event.rawValue) of \(object.collection)/\(object.guid): \(error)",
                    requestID: origin?.requestID)
            }
        }
    }

    private func run(
        _ handler: ScriptHandler, event: ScriptHandler.Event, data: JSONValue, object: StoredObject,
        previous: StoredObject?, caller: Principal?, origin: WriteOrigin?
    ) async throws -> ScriptOutcome {
        var context = JSONObject()
        context["appAddress"] = .string(appAddress)
        if let origin { context["requestId"] = .string(origin.requestID) }
        context["eventId"] = .string(
            "\(event.rawValue):\(object.collection)/\(object.guid)/\(object.version)")
        context["event"] = .string(event.rawValue)
        var invocation = ScriptInvocation(
            kind: .handler, name: handler.name, entry: handler.entry, data: data, context: context,
            returnsEventData: handler.phase == .pre)
        // Each user's handlers take turns with everyone else's in the pool.
        invocation.owner = caller.map { "user " + $0.userGuid } ?? origin.map { "address " + $0.client } ?? ""
        // A PRE handler's write is refused at its owner's limit with nothing stored; a POST
        // handler's is committed, so its run waits its owner's turn instead.
        invocation.committed = handler.phase != .pre
        let replaced = event == .update ? previous.flatMap { Self.wire($0.document) } : nil
        return try await invoke(
            invocation, makeCalls(caller, handler.rights, handler.name, replaced, origin?.requestID ?? "-"))
    }

    /// A stored document in FatFractal's wire shape, as handlers see objects.
    public static func wire(_ document: [UInt8]) -> JSONValue? {
        guard case .object(let fields)? = try? JSONParser.parse(document) else { return nil }
        return FatFractalWire.wireObject(fields, mayEdit: { _, _, _ in true })
    }
}
