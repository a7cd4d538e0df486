import RoostJSON

/// What a handler or extension runs: a function exported by one of the app's script modules, or
/// (for FatFractal's FFDL lines that are not of that shape) a snippet of JavaScript evaluated with
/// `FF_EVENT_DATA_JSON` / `FF_EXTENSION_REQUEST_DATA_JSON` defined.
public struct ScriptEntry: Sendable, Equatable {
    /// A module id such as `scripts/WouldYaEventHandlers` (the file `scripts/WouldYaEventHandlers.js`
    /// next to `roost.json`).
    public var module: String?
    /// The exported function the module's `exports` names.
    public var function: String?
    /// A JavaScript snippet, used instead of `module` and `function`.
    public var code: String?

    public init(module: String, function: String) {
        self.module = module
        self.function = function
        self.code = nil
    }

    public init(code: String) {
        self.module = nil
        self.function = nil
        self.code = code
    }
}

/// Whose rights a script's data calls carry.
public enum ScriptRights: String, Sendable, Equatable {
    /// The user whose request caused the event or called the extension (anonymous if none).
    case caller
    /// No rule applies, as for an administrator.
    case system
}

/// `CREATE HANDLER name {PRE | POST | ASYNC} ON /Collection {Create | Update | Delete}`.
public struct ScriptHandler: Sendable, Equatable {
    public enum Phase: String, Sendable, Equatable, CaseIterable {
        /// Before the write, in its path: may refuse it or change the object.
        case pre
        /// After the write, before the client's answer.
        case post
        /// After the answer, from the durable outbox (the change log), retried with backoff.
        case async
    }

    public enum Event: String, Sendable, Equatable, CaseIterable {
        case create, update, delete
    }

    public var name: String
    public var collection: String
    public var events: Set<Event>
    public var phase: Phase
    public var entry: ScriptEntry
    public var rights: ScriptRights

    public init(
        name: String, collection: String, events: Set<Event>, phase: Phase, entry: ScriptEntry,
        rights: ScriptRights = .caller
    ) {
        self.name = name
        self.collection = collection
        self.events = events
        self.phase = phase
        self.entry = entry
        self.rights = rights
    }
}

/// `CREATE EXTENSION /name [UNSECURED]`, served at `/ff/ext/name`.
public struct ScriptExtension: Sendable, Equatable {
    public var name: String
    /// Logged-in callers only (FatFractal's default); `UNSECURED` clears it.
    public var secured: Bool
    public var entry: ScriptEntry
    public var rights: ScriptRights

    public init(name: String, secured: Bool = true, entry: ScriptEntry, rights: ScriptRights = .caller) {
        self.name = name
        self.secured = secured
        self.entry = entry
        self.rights = rights
    }
}

/// The app's server-side scripts as one definition holds them.
public struct ScriptSettings: Sendable, Equatable {
    /// Handlers in declaration order (several may run for one event, in this order).
    public var handlers: [ScriptHandler] = []
    /// Extensions by name.
    public var extensions: [String: ScriptExtension] = [:]
    /// The sources of the app's script modules by module id (`scripts/Name`), read from the
    /// `scripts` folder next to `roost.json`.
    public var modules: [String: String] = [:]

    public init() {}

    /// Whether any handler of `phase` runs for `event` on `collection`; the write path asks this
    /// first, so an app without handlers pays one dictionary-free scan of an empty array.
    public func handlers(
        for event: ScriptHandler.Event, in collection: String, phase: ScriptHandler.Phase
    ) -> [ScriptHandler] {
        handlers.filter { $0.phase == phase && $0.collection == collection && $0.events.contains(event) }
    }
}
