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

extension ScriptSettings {
    /// The most handlers, and extensions, one definition declares.
    public static let maximumHandlers = 100
    public static let maximumExtensions = 100
    /// The largest `code` snippet, in UTF-8 bytes.
    public static let maximumCodeBytes = 64 * 1024
    /// The most script files, the largest one and all of them together, in UTF-8 bytes.
    public static let maximumModules = 500
    public static let maximumModuleBytes = 1 << 20
    public static let maximumTotalModuleBytes = 8 << 20
    /// How many folders deep inside `scripts/` a script file may sit.
    public static let maximumModuleFolderDepth = 4
    /// The prefix of every module id: the `scripts` folder next to `roost.json`.
    public static let modulePrefix = "scripts/"

    /// A handler's or extension's name: 1 to 64 ASCII letters, digits or `_` (an extension's name
    /// is its URL, `/ff/ext/<name>`).
    public static func isValidName(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        return (1...64).contains(bytes.count) && bytes.allSatisfy(isNameByte)
    }

    /// A module id: `scripts/` then 1 to 5 path segments (up to 4 folders and the file's name
    /// without `.js`), each 1 to 128 of ASCII letters, digits, `_`, `-` or `.`, not starting
    /// with `.`, the last not ending in `.js`; 256 bytes at most.
    public static func isValidModuleID(_ id: String) -> Bool {
        guard id.hasPrefix(modulePrefix), id.utf8.count <= 256, !id.hasSuffix(".js") else { return false }
        let segments = id.dropFirst(modulePrefix.count).split(
            separator: "/", omittingEmptySubsequences: false)
        return (1...maximumModuleFolderDepth + 1).contains(segments.count)
            && segments.allSatisfy(isValidPathSegment)
    }

    /// One file or folder name inside `scripts/` that can be part of a module id.
    static func isValidPathSegment(_ segment: Substring) -> Bool {
        let bytes = Array(segment.utf8)
        return (1...128).contains(bytes.count) && bytes[0] != UInt8(ascii: ".")
            && bytes.allSatisfy { isNameByte($0) || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: ".") }
    }

    /// A JavaScript identifier (ASCII): a letter, `_` or `$`, then letters, digits, `_` or `$`;
    /// 128 bytes at most.
    public static func isValidFunctionName(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        guard let first = bytes.first, bytes.count <= 128 else { return false }
        let isStart = { (byte: UInt8) in
            isLetter(byte) || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "$")
        }
        return isStart(first) && bytes.allSatisfy { isStart($0) || (48...57).contains($0) }
    }

    private static func isLetter(_ byte: UInt8) -> Bool {
        (65...90).contains(byte) || (97...122).contains(byte)
    }

    private static func isNameByte(_ byte: UInt8) -> Bool {
        isLetter(byte) || (48...57).contains(byte) || byte == UInt8(ascii: "_")
    }
}
