import RoostCore
import RoostJSON

/// One run of a script: a handler for an event, an extension for a request, or `roost script run`.
public struct ScriptInvocation: Sendable {
    public enum Kind: String, Sendable {
        case handler, `extension`, run
    }

    public var kind: Kind
    /// The handler's or extension's name: for logs and `/metrics`.
    public var name: String
    public var entry: ScriptEntry
    /// The text passed as `FF_EVENT_DATA_JSON` / `FF_EXTENSION_REQUEST_DATA_JSON` (and as the
    /// exported function's one argument); nil is `data` as JSON, made by the worker (so the
    /// object crosses the channel once).
    public var argument: String?
    /// What `ff.getEventHandlerData()` / `ff.getExtensionRequestData()` return.
    public var data: JSONValue
    /// `appAddress`, `eventId`, `requestId`, and optionally `activeUser` (the FFUser object or
    /// null); without it `ff.getActiveUser()` asks the server (a `getActiveUser` call), so a
    /// script that never asks costs no lookup.
    public var context: JSONObject
    /// Whether the outcome carries the event's object as the script left it (PRE handlers).
    public var returnsEventData = false
    /// Whose run it is, for taking turns in the pool: `user <guid>`, `address <client>`, or empty
    /// (anonymous handlers, the system, the change log's dispatcher).
    public var owner = ""
    /// The run belongs to a write already committed (a POST or ASYNC handler): refusing it would
    /// lose it, so past its owner's limit it waits behind the owner's other runs instead of
    /// being refused; only runs that can still be refused with nothing done are.
    public var committed = false

    public init(
        kind: Kind, name: String, entry: ScriptEntry, argument: String? = nil, data: JSONValue,
        context: JSONObject, returnsEventData: Bool = false
    ) {
        self.kind = kind
        self.name = name
        self.entry = entry
        self.argument = argument
        self.data = data
        self.context = context
        self.returnsEventData = returnsEventData
    }
}

/// What a finished script left behind.
public struct ScriptOutcome: Sendable {
    /// The function's return value as JSON (null for undefined or what JSON cannot hold).
    public var value: JSONValue
    /// `ff.response()`'s fields (`result`, `responseCode`, `statusMessage`, `mimeType`) if the
    /// script asked for it.
    public var response: JSONObject?
    /// The event's object as the script left it (a PRE handler's changes), when the invocation
    /// asked for it and the script read it.
    public var eventData: JSONValue?

    public init(value: JSONValue = .null, response: JSONObject? = nil, eventData: JSONValue? = nil) {
        self.value = value
        self.response = response
        self.eventData = eventData
    }
}

/// Carries out a running script's `ff` calls on the server, with the rights of one caller.
public protocol ScriptCallHandling: Sendable {
    /// `method` is the `ff` function's name (`getObjFromUrl`, …) and `arguments` what the script
    /// passed, as JSON. Throws a ``RoostError`` the script sees as an exception.
    func call(_ method: String, arguments: [JSONValue]) async throws -> JSONValue
    /// `print` and `ff.logger` output.
    func log(level: String, message: String)
}
