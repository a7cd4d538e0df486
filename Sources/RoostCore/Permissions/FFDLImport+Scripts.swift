import RoostJSON

/// `CREATE HANDLER` and `CREATE EXTENSION` lines, as FatFractal's samples write them:
///
///     CREATE HANDLER WouldYaCreate POST ON /WouldYa Create as javascript:var h = require ('scripts/WouldYaEventHandlers'); h.handleWouldYaCreate (FF_EVENT_DATA_JSON);
///     CREATE HANDLER qrCode POST ON /Products CREATE AS javascript:require('scripts/handlers').addQRCode();
///     CREATE EXTENSION /resetPassword UNSECURED AS javascript:require ('scripts/PasswordReset.js').resetPassword();
extension FFDLImport {
    /// What one line declares, as the JSON `roost.json` holds under `handlers` or `extensions`.
    public enum ScriptStatement: Sendable, Equatable {
        case handler(name: String, JSONObject)
        case `extension`(name: String, JSONObject)
        /// Why the line has no Roost equivalent.
        case untranslatable(String)
    }

    static let handlerForm =
        "expects CREATE HANDLER name [PRE|POST|ASYNC] ON /Collection Create|Update|Delete AS javascript:…"
    static let extensionForm = "expects CREATE EXTENSION /name [UNSECURED] AS javascript:…"

    /// Translates a `CREATE HANDLER` or `CREATE EXTENSION` line. FatFractal's server-side code ran
    /// with the system user's rights (its API takes an explicit user to act as someone else), so
    /// the translation runs as `system`. A handler without PRE, POST or ASYNC is POST.
    public static func scriptStatement(_ line: String) -> ScriptStatement {
        var words = Words(line)
        guard words.next()?.uppercased() == "CREATE", let kind = words.next()?.uppercased() else {
            return .untranslatable("not a CREATE HANDLER or CREATE EXTENSION line")
        }
        switch kind {
        case "HANDLER": return handler(&words)
        case "EXTENSION": return extensionStatement(&words)
        default: return .untranslatable("not a CREATE HANDLER or CREATE EXTENSION line")
        }
    }

    private static func handler(_ words: inout Words) -> ScriptStatement {
        guard let name = words.next() else { return .untranslatable(handlerForm) }
        guard ScriptSettings.isValidName(name) else {
            return .untranslatable(
                "'\(name.prefix(80))' is not a handler name Roost accepts (1 to 64 letters, digits or '_')")
        }
        var phase = "post"
        var word = words.next()
        if let timing = word?.lowercased(), ["pre", "post", "async"].contains(timing) {
            phase = timing
            word = words.next()
        }
        guard word?.uppercased() == "ON", let target = words.next() else {
            return .untranslatable(handlerForm)
        }
        guard let collection = collectionName(target) else {
            return .untranslatable("'\(target.prefix(80))' is not a collection name Roost accepts")
        }
        var events: [JSONValue] = []
        while let word = words.next(), word.uppercased() != "AS" {
            for event in word.split(separator: ",") {
                guard let known = ScriptHandler.Event(rawValue: event.lowercased()) else {
                    return .untranslatable(
                        "Roost runs handlers on Create, Update and Delete; '\(event.prefix(40))' has no equivalent"
                    )
                }
                if !events.contains(.string(known.rawValue)) { events.append(.string(known.rawValue)) }
            }
        }
        guard !events.isEmpty else { return .untranslatable(handlerForm) }
        let entry: JSONObject
        switch scriptEntry(words.rest, form: handlerForm) {
        case .success(let made): entry = made
        case .failure(let reason): return .untranslatable(reason.message)
        }
        var body = JSONObject(uniqueMembers: [
            ("collection", .string(collection)), ("events", .array(events)), ("phase", .string(phase)),
        ])
        for (key, value) in entry.members { body[key] = value }
        return .handler(name: name, body)
    }

    private static func extensionStatement(_ words: inout Words) -> ScriptStatement {
        guard let target = words.next() else { return .untranslatable(extensionForm) }
        let name = target.hasPrefix("/") ? String(target.dropFirst()) : target
        guard ScriptSettings.isValidName(name) else {
            return .untranslatable(
                "'\(target.prefix(80))' is not an extension name Roost accepts (1 to 64 letters, digits or '_')"
            )
        }
        var secured = true
        var word = words.next()
        if let flag = word?.uppercased(), flag == "UNSECURED" || flag == "SECURED" {
            secured = flag == "SECURED"
            word = words.next()
        }
        guard word?.uppercased() == "AS" else { return .untranslatable(extensionForm) }
        switch scriptEntry(words.rest, form: extensionForm) {
        case .success(let entry):
            var body = JSONObject()
            if !secured { body["secured"] = .bool(false) }
            for (key, value) in entry.members { body[key] = value }
            return .extension(name: name, body)
        case .failure(let reason):
            return .untranslatable(reason.message)
        }
    }

    struct Refusal: Error {
        let message: String
    }

    /// `javascript:<code>`: `script` and `function` when the code only calls one function of one
    /// of the app's modules (FatFractal's usual line), else the code itself.
    static func scriptEntry(_ text: Substring, form: String) -> Result<JSONObject, Refusal> {
        let prefix = "javascript:"
        guard text.lowercased().hasPrefix(prefix) else {
            if let colon = text.firstIndex(of: ":"), !text[..<colon].contains(" ") {
                return .failure(
                    Refusal(
                        message:
                            "Roost runs JavaScript; '\(text[..<colon].prefix(40))' code has no equivalent"))
            }
            return .failure(Refusal(message: form))
        }
        let code = String(text.dropFirst(prefix.count)).trimmed(of: " \t")
        let rights: (key: String, value: JSONValue) = ("runAs", .string(ScriptRights.system.rawValue))
        if let (module, function) = moduleCall(code) {
            return .success(
                JSONObject(uniqueMembers: [
                    ("script", .string(module)), ("function", .string(function)), rights,
                ]))
        }
        guard (1...ScriptSettings.maximumCodeBytes).contains(code.utf8.count) else {
            return .failure(Refusal(message: "the code is empty or longer than 64 KiB"))
        }
        return .success(JSONObject(uniqueMembers: [("code", .string(code)), rights]))
    }

    /// The module and function of `var h = require('scripts/M'); h.f(ARGUMENT);` or
    /// `require('scripts/M').f(ARGUMENT);`, where ARGUMENT is nothing, `FF_EVENT_DATA_JSON` or
    /// `FF_EXTENSION_REQUEST_DATA_JSON` (what Roost passes anyway). Spacing is free, quotes single
    /// or double, the last `;` optional; a `.js` ending of the module is dropped.
    static func moduleCall(_ code: String) -> (module: String, function: String)? {
        guard var tokens = JavaScriptTokens(code) else { return nil }
        var variable: String?
        if tokens.take(.word("var")) {
            guard case .word(let name)? = tokens.next(), tokens.take(.symbol("=")) else { return nil }
            variable = name
        }
        guard tokens.take(.word("require")), tokens.take(.symbol("(")),
            case .string(var module)? = tokens.next(),
            tokens.take(.symbol(")"))
        else { return nil }
        if let variable {
            guard tokens.take(.symbol(";")), tokens.take(.word(variable)) else { return nil }
        }
        guard tokens.take(.symbol(".")), case .word(let function)? = tokens.next(), tokens.take(.symbol("("))
        else { return nil }
        if case .word(let argument)? = tokens.peek,
            ["FF_EVENT_DATA_JSON", "FF_EXTENSION_REQUEST_DATA_JSON"].contains(argument)
        {
            _ = tokens.next()
        }
        guard tokens.take(.symbol(")")) else { return nil }
        _ = tokens.take(.symbol(";"))
        guard tokens.peek == nil else { return nil }
        if module.hasSuffix(".js") { module.removeLast(3) }
        guard ScriptSettings.isValidModuleID(module), ScriptSettings.isValidFunctionName(function),
            variable.map(ScriptSettings.isValidFunctionName) ?? true
        else { return nil }
        return (module, function)
    }
}

/// The words of a line, and what is left after them as written.
struct Words {
    private(set) var rest: Substring

    init(_ line: String) { rest = Substring(line) }

    mutating func next() -> String? {
        rest = rest.drop(while: { $0 == " " || $0 == "\t" })
        guard !rest.isEmpty else { return nil }
        let word = rest.prefix(while: { $0 != " " && $0 != "\t" })
        rest = rest[word.endIndex...].drop(while: { $0 == " " || $0 == "\t" })
        return String(word)
    }
}

/// Just enough of JavaScript's tokens to recognise one `require(…).f(…)` call: names, quoted
/// strings without escapes, and single punctuation characters.
struct JavaScriptTokens {
    enum Token: Equatable {
        case word(String), string(String), symbol(Character)
    }

    private var tokens: [Token]
    private var position = 0

    init?(_ code: String) {
        var tokens: [Token] = []
        var index = code.startIndex
        while index < code.endIndex {
            let character = code[index]
            if character.isWhitespace {
                index = code.index(after: index)
            } else if character == "'" || character == "\"" {
                let start = code.index(after: index)
                guard let end = code[start...].firstIndex(where: { $0 == character || $0 == "\\" }),
                    code[end] == character
                else { return nil }
                tokens.append(.string(String(code[start..<end])))
                index = code.index(after: end)
            } else if character.isLetter || character.isNumber || character == "_" || character == "$" {
                let word = code[index...].prefix(while: {
                    $0.isLetter || $0.isNumber || $0 == "_" || $0 == "$"
                })
                tokens.append(.word(String(word)))
                index = word.endIndex
            } else {
                tokens.append(.symbol(character))
                index = code.index(after: index)
            }
        }
        self.tokens = tokens
    }

    var peek: Token? { position < tokens.count ? tokens[position] : nil }

    mutating func next() -> Token? {
        defer { position += 1 }
        return peek
    }

    /// Consumes the next token if it is `token`.
    mutating func take(_ token: Token) -> Bool {
        guard peek == token else { return false }
        position += 1
        return true
    }
}
