import RoostJSON

/// `handlers`, `extensions` and the older `serverScripts` of `roost.json`, checked against the
/// script modules read from the `scripts` folder next to it.
extension AppDefinition {
    static func parseScripts(_ top: JSONObject, modules: [String: String]) throws(AppDefinitionError)
        -> ScriptSettings
    {
        try checkModules(modules)
        var scripts = ScriptSettings()
        scripts.modules = modules
        if let handlers = top["handlers"] {
            guard case .object(let members) = handlers, members.count <= ScriptSettings.maximumHandlers else {
                throw .at(
                    "handlers",
                    "an object of at most \(ScriptSettings.maximumHandlers) handlers by name, such as {\"VoteCreate\": {\"collection\": \"Vote\", \"events\": [\"create\"], \"phase\": \"post\", \"script\": \"scripts/Votes\", \"function\": \"onCreate\"}}"
                )
            }
            for (name, body) in members.members {
                scripts.handlers.append(
                    try parseHandler(name, body, at: "handlers.\(name.prefix(80))", modules: modules))
            }
        }
        if let extensions = top["extensions"] {
            guard case .object(let members) = extensions, members.count <= ScriptSettings.maximumExtensions
            else {
                throw .at(
                    "extensions",
                    "an object of at most \(ScriptSettings.maximumExtensions) extensions by name, such as {\"Stats\": {\"script\": \"scripts/Stats\", \"function\": \"run\"}}"
                )
            }
            for (name, body) in members.members {
                scripts.extensions[name] = try parseExtension(
                    name, body, at: "extensions.\(name.prefix(80))", modules: modules)
            }
        }
        if let lines = top["serverScripts"] { try translateServerScripts(lines, into: &scripts) }
        return scripts
    }

    private static func parseHandler(
        _ name: String, _ body: JSONValue, at place: String, modules: [String: String]
    ) throws(AppDefinitionError) -> ScriptHandler {
        guard ScriptSettings.isValidName(name) else {
            throw .at(place, "a handler's name is 1 to 64 letters, digits or '_'")
        }
        guard case .object(let fields) = body else {
            throw .at(
                place,
                "a handler is an object with 'collection', 'events', 'phase', and 'script' and 'function' or 'code'"
            )
        }
        try allowOnly(
            ["collection", "events", "phase", "script", "function", "code", "runAs"], in: fields,
            at: place + ".")
        guard let collection = fields["collection"]?.stringValue, ObjectService.isValidCollection(collection)
        else {
            throw .at(
                place + ".collection",
                "the collection whose writes run the handler: a letter, then up to 63 letters, digits or '_'")
        }
        let eventsMessage = "a non-empty list of 'create', 'update' and 'delete', each at most once"
        guard case .array(let items) = fields["events"], !items.isEmpty else {
            throw .at(place + ".events", eventsMessage)
        }
        var events = Set<ScriptHandler.Event>()
        for item in items {
            guard let text = item.stringValue, let event = ScriptHandler.Event(rawValue: text),
                events.insert(event).inserted
            else { throw .at(place + ".events", eventsMessage) }
        }
        guard let text = fields["phase"]?.stringValue, let phase = ScriptHandler.Phase(rawValue: text) else {
            throw .at(
                place + ".phase",
                "'pre' (before the write, may refuse or change it), 'post' (after the write, before the answer) or 'async' (after the answer, retried)"
            )
        }
        return ScriptHandler(
            name: name, collection: collection, events: events, phase: phase,
            entry: try parseEntry(fields, at: place, modules: modules),
            rights: try parseRights(fields, at: place))
    }

    private static func parseExtension(
        _ name: String, _ body: JSONValue, at place: String, modules: [String: String]
    ) throws(AppDefinitionError) -> ScriptExtension {
        guard ScriptSettings.isValidName(name) else {
            throw .at(
                place, "an extension's name (its URL is /ff/ext/<name>) is 1 to 64 letters, digits or '_'")
        }
        guard case .object(let fields) = body else {
            throw .at(place, "an extension is an object with 'script' and 'function', or 'code'")
        }
        try allowOnly(["secured", "script", "function", "code", "runAs"], in: fields, at: place + ".")
        var secured = true
        if let value = fields["secured"] {
            guard case .bool(let flag) = value else {
                throw .at(
                    place + ".secured",
                    "true (the default: logged-in callers only) or false (anyone may call it)")
            }
            secured = flag
        }
        return ScriptExtension(
            name: name, secured: secured, entry: try parseEntry(fields, at: place, modules: modules),
            rights: try parseRights(fields, at: place))
    }

    /// `script` + `function` (a module that must be in `modules`), or `code`.
    private static func parseEntry(_ fields: JSONObject, at place: String, modules: [String: String])
        throws(AppDefinitionError) -> ScriptEntry
    {
        let script = fields["script"]
        let function = fields["function"]
        if let code = fields["code"] {
            guard script == nil, function == nil else {
                throw .at(place, "give 'script' and 'function', or 'code', not both")
            }
            guard let text = code.stringValue, (1...ScriptSettings.maximumCodeBytes).contains(text.utf8.count)
            else {
                throw .at(
                    place + ".code",
                    "a JavaScript snippet of 1 to \(ScriptSettings.maximumCodeBytes) bytes; put longer code in a file under scripts/"
                )
            }
            return ScriptEntry(code: text)
        }
        guard let script else {
            throw .at(
                place,
                "give 'script' and 'function' (a module in the scripts folder and the function it exports) or 'code' (a JavaScript snippet)"
            )
        }
        guard let module = script.stringValue, ScriptSettings.isValidModuleID(module) else {
            let text = script.stringValue ?? ""
            let hint =
                text.hasPrefix(ScriptSettings.modulePrefix) && text.hasSuffix(".js")
                ? "; leave out '.js': \"\(text.dropLast(3).prefix(200))\"" : ""
            throw .at(
                place + ".script",
                "a module id such as \"scripts/Votes\" (the file scripts/Votes.js next to roost.json)\(hint)")
        }
        guard modules[module] != nil else {
            throw .at(
                place + ".script",
                "no file \(module).js: put it in the scripts folder next to roost.json")
        }
        guard let name = function?.stringValue, ScriptSettings.isValidFunctionName(name) else {
            throw .at(
                place + ".function",
                "the name of the function \(module).js exports, a JavaScript identifier such as \"onCreate\"")
        }
        return ScriptEntry(module: module, function: name)
    }

    private static func parseRights(_ fields: JSONObject, at place: String) throws(AppDefinitionError)
        -> ScriptRights
    {
        guard let value = fields["runAs"] else { return .caller }
        guard let text = value.stringValue, let rights = ScriptRights(rawValue: text) else {
            throw .at(
                place + ".runAs",
                "'caller' (the default: the rules apply as to the user who caused the call) or 'system' (no rule applies)"
            )
        }
        return rights
    }

    /// The module sources keep the limits the scripts folder has, wherever they come from (the
    /// folder, or a definition stored in the shared database).
    static func checkModules(_ modules: [String: String]) throws(AppDefinitionError) {
        guard modules.count <= ScriptSettings.maximumModules else {
            throw .at("scripts", "more than \(ScriptSettings.maximumModules) script files")
        }
        var total = 0
        for (id, source) in modules.sorted(by: { $0.key < $1.key }) {
            guard ScriptSettings.isValidModuleID(id) else {
                throw .at(String(id.prefix(256)), "not a module id of the form scripts/<path without .js>")
            }
            total += source.utf8.count
            guard source.utf8.count <= ScriptSettings.maximumModuleBytes else {
                throw .at(id + ".js", "larger than 1 MiB, the most one script file may hold")
            }
            guard total <= ScriptSettings.maximumTotalModuleBytes else {
                throw .at(id + ".js", "the script files add up to more than 8 MiB")
            }
        }
    }

    /// `serverScripts`: FFDL lines an earlier `roost app import` kept; each becomes the handler or
    /// extension `roost app import` would make of it now.
    private static func translateServerScripts(_ value: JSONValue, into scripts: inout ScriptSettings)
        throws(AppDefinitionError)
    {
        guard case .array(let items) = value else {
            throw .at("serverScripts", "a list of FFDL lines (CREATE HANDLER or CREATE EXTENSION)")
        }
        for (index, item) in items.enumerated() {
            let place = "serverScripts[\(index)]"
            guard let line = item.stringValue else {
                throw .at(place, "an FFDL line (CREATE HANDLER or CREATE EXTENSION)")
            }
            let rewrite =
                "; declare it under 'handlers' or 'extensions' instead (see docs/scripts.md)"
            switch FFDLImport.scriptStatement(line) {
            case .handler(let name, let body):
                guard !scripts.handlers.contains(where: { $0.name == name }) else {
                    throw .at(place, "a handler named '\(name)' is declared twice\(rewrite)")
                }
                scripts.handlers.append(
                    try parseHandler(name, .object(body), at: place, modules: scripts.modules))
            case .extension(let name, let body):
                guard scripts.extensions[name] == nil else {
                    throw .at(place, "an extension named '\(name)' is declared twice\(rewrite)")
                }
                scripts.extensions[name] = try parseExtension(
                    name, .object(body), at: place, modules: scripts.modules)
            case .untranslatable(let reason):
                throw .at(place, reason + rewrite)
            }
        }
        guard scripts.handlers.count <= ScriptSettings.maximumHandlers,
            scripts.extensions.count <= ScriptSettings.maximumExtensions
        else {
            throw .at(
                "serverScripts",
                "with 'handlers' and 'extensions', more than \(ScriptSettings.maximumHandlers) handlers or \(ScriptSettings.maximumExtensions) extensions"
            )
        }
    }
}
