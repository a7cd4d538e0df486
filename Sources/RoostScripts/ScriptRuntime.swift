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
    /// exported function's one argument).
    public var argument: String
    /// What `ff.getEventHandlerData()` / `ff.getExtensionRequestData()` return.
    public var data: JSONValue
    /// `activeUser` (the FFUser object or null), `appAddress`, `eventId`, `requestId`.
    public var context: JSONObject

    public init(
        kind: Kind, name: String, entry: ScriptEntry, argument: String, data: JSONValue,
        context: JSONObject
    ) {
        self.kind = kind
        self.name = name
        self.entry = entry
        self.argument = argument
        self.data = data
        self.context = context
    }
}

/// What a finished script left behind.
public struct ScriptOutcome: Sendable {
    /// The function's return value as JSON (null for undefined or what JSON cannot hold).
    public var value: JSONValue
    /// `ff.response()`'s fields (`result`, `responseCode`, `statusMessage`, `mimeType`) if the
    /// script asked for it.
    public var response: JSONObject?
    /// The event's object as the script left it (a PRE handler's changes).
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
