import RoostJSON

/// Translates a FatFractal app definition (`application.ffdl`) into a Roost one (`roost.json`),
/// line by line: every line that says something is either translated, not needed on Roost
/// (with the reason), or not translated (with the reason); none is dropped silently.
public struct FFDLImport: Sendable {
    /// What became of one line.
    public struct Line: Sendable, Equatable {
        public enum Outcome: String, Sendable {
            case translated, notNeeded = "not needed", notTranslated = "not translated"
        }
        /// 1-based.
        public let number: Int
        /// The line as written; values of secret settings (passwords, tokens, keys) are hidden.
        public let text: String
        public let outcome: Outcome
        public let reason: String
        /// Said of a line translated as written whose rule lets many callers change much (any
        /// user rewrites every group, say): FatFractal meant it too, but it is rarely wanted.
        public var warning: String? = nil
    }

    /// The definition as JSON, ready for `roost app check`.
    public private(set) var definition = JSONObject()
    public private(set) var lines: [Line] = []

    /// Collections a `DROP COLLECTION` removed (see ``FFDLChange``).
    public internal(set) var droppedCollections: [String] = []

    private var settings = JSONObject()
    var collections = JSONObject()
    private var origins: [JSONValue] = []
    private var handlers = JSONObject()
    private var extensions = JSONObject()
    /// The line each handler and extension came from, by name.
    private var declaredAt: [String: Int] = [:]

    /// Translates the text of an `application.ffdl`. A line ending in `\` goes on on the next
    /// one, as FatFractal read it; the statement is numbered by its first line.
    public init(ffdl text: String) {
        var statement = ""
        var first = 0
        // "\r\n" is one Character: FatFractal's pages send it (gettingstarted's settings).
        let rows = text.split(
            omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" })
        for (index, raw) in rows.enumerated() {
            let line = String(raw).trimmed(of: " \t\r")
            if statement.isEmpty {
                if line.isEmpty || line.hasPrefix("#") { continue }
                first = index + 1
            }
            if line.hasSuffix("\\") {
                statement += String(line.dropLast()).trimmed(of: " \t") + " "
                continue
            }
            statement += line
            translate(statement.trimmed(of: " "), number: first)
            statement = ""
        }
        if !statement.isEmpty { translate(statement.trimmed(of: " "), number: first) }
        if !origins.isEmpty {
            definition["cors"] = .object(JSONObject(uniqueMembers: [("allowedOrigins", .array(origins))]))
        }
        if !settings.isEmpty { definition["settings"] = .object(settings) }
        if !collections.isEmpty { definition["collections"] = .object(collections) }
        if !handlers.isEmpty { definition["handlers"] = .object(handlers) }
        if !extensions.isEmpty { definition["extensions"] = .object(extensions) }
    }

    mutating func record(
        _ number: Int, _ text: String, _ outcome: Line.Outcome, _ reason: String, warning: String? = nil
    ) {
        lines.append(Line(number: number, text: text, outcome: outcome, reason: reason, warning: warning))
    }

    private mutating func translate(_ line: String, number: Int) {
        let words = line.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
        let keyword = words.prefix(2).map { $0.uppercased() }
        switch keyword.first {
        case "SET" where words.count >= 2:
            setting(words, line: line, number: number)
        case "PERMIT":
            permit(words, line: line, number: number)
        case "DROP" where keyword.count == 2:
            drop(keyword[1], words, line: line, number: number)
        case "CREATE" where keyword.count == 2:
            switch keyword[1] {
            case "COLLECTION":
                guard words.count >= 3, let name = Self.collectionName(words[2]) else {
                    return record(number, line, .notTranslated, "not a collection name Roost accepts")
                }
                if collections[name] == nil { collections[name] = .object(JSONObject()) }
                record(number, line, .translated, "collections.\(name)")
            case "OBJECTTYPE":
                objectType(line, number: number)
            case "HANDLER", "EXTENSION":
                script(line, number: number)
            default:
                record(number, line, .notTranslated, "Roost has no equivalent of CREATE \(keyword[1])")
            }
        default:
            record(number, line, .notTranslated, "not a statement this importer knows")
        }
    }

    private mutating func script(_ line: String, number: Int) {
        switch Self.scriptStatement(line) {
        case .handler(let name, let body):
            declare(name, body, handler: true, line, number)
        case .extension(let name, let body):
            declare(name, body, handler: false, line, number)
        case .untranslatable(let reason):
            record(number, line, .notTranslated, reason)
        }
    }

    private mutating func declare(
        _ name: String, _ body: JSONObject, handler: Bool, _ line: String, _ number: Int
    ) {
        let key = handler ? "handlers" : "extensions"
        let limit = handler ? ScriptSettings.maximumHandlers : ScriptSettings.maximumExtensions
        var list = handler ? handlers : extensions
        defer { if handler { handlers = list } else { extensions = list } }
        if list[name] != nil {
            let earlier = declaredAt["\(key).\(name)"] ?? 0
            return record(number, line, .notTranslated, "'\(name)' is declared on line \(earlier) already")
        }
        guard list.count < limit else {
            return record(number, line, .notTranslated, "Roost takes at most \(limit) \(key)")
        }
        list[name] = .object(body)
        declaredAt["\(key).\(name)"] = number
        let entry =
            if case .string(let module)? = body["script"], case .string(let function)? = body["function"] {
                "\(module).js, function \(function)"
            } else {
                "its code"
            }
        record(
            number, line, .translated, "\(key).\(name): runs \(entry) with system rights, as FatFractal did")
    }

    private mutating func setting(_ words: [String], line: String, number: Int) {
        let name = words[1]
        let values = Array(words.dropFirst(2))
        let lowered = name.lowercased()
        if let reason = Self.systemUserSetting(lowered) {
            return record(
                number, lowered.contains("password") ? "SET \(name) <hidden>" : line, .notTranslated, reason)
        }
        if ["password", "token", "key", "secret"].contains(where: { lowered.contains($0) }) {
            let hidden = "SET \(name) <hidden>"
            return record(
                number, hidden, .notTranslated,
                "keys are read from files: roost serve --apns-key-file / --fcm-service-account")
        }
        func flag() -> Bool? {
            switch values.first?.lowercased() {
            case "true": true
            case "false": false
            default: nil
            }
        }
        switch lowered {
        case "allowautoregistration", "allownewcollections", "pushisinactive":
            guard let value = flag() else {
                return record(number, line, .notTranslated, "expects true or false")
            }
            let key =
                ["allowautoregistration": "allowAutoRegistration", "pushisinactive": "pushInactive"][lowered]
                ?? "allowNewCollections"
            settings[key] = .bool(value)
            record(number, line, .translated, "settings.\(key)")
        case "cors":
            for value in values {
                // FatFractal took "https://host/" too.
                let bare = value.hasSuffix("/") && value.contains("://") ? String(value.dropLast()) : value
                guard let origin = AppDefinition.normalizedOrigin(bare) else {
                    return record(number, line, .notTranslated, "'\(value.prefix(80))' is not an origin")
                }
                if !origins.contains(.string(origin)) { origins.append(.string(origin)) }
            }
            record(number, line, .translated, "cors.allowedOrigins")
        case "etaggingenabled":
            record(number, line, .notNeeded, "Roost always sends ETags and answers If-None-Match")
        case "allownewobjecttypes", "allownewmembers":
            record(number, line, .notNeeded, "Roost stores schemaless objects")
        case "loglevel":
            record(number, line, .notTranslated, "a server option: use roost serve --log-level")
        default:
            record(number, line, .notTranslated, "Roost has no such setting")
        }
    }

    /// `PERMIT create:… read:… write:… ON /Collection`; a principal may be a comma-separated
    /// list. A line that names the collection but cannot be translated closes it (every rule
    /// `none`), so what FatFractal restricted is never left open.
    private mutating func permit(_ words: [String], line: String, number: Int) {
        guard let on = words.firstIndex(where: { $0.uppercased() == "ON" }), on + 1 < words.count,
            let name = Self.collectionName(words[on + 1])
        else { return record(number, line, .notTranslated, "expects PERMIT …:… ON /Collection") }
        var rules = JSONObject()
        for grant in words[1..<on] {
            let parts = grant.split(separator: ":", maxSplits: 1).map(String.init)
            guard parts.count == 2 else {
                return close(name, line, number, "'\(grant.prefix(80))' is not operation:principal")
            }
            guard let rule = Self.rule(parts[1]) else {
                return close(name, line, number, "'\(parts[1].prefix(80))' has no Roost rule")
            }
            switch parts[0].lowercased() {
            case "read": rules["read"] = .string(rule)
            case "create": rules["create"] = .string(rule)
            case "write":
                rules["update"] = .string(rule)
                rules["delete"] = .string(rule)
            default:
                return close(name, line, number, "'\(parts[0].prefix(40))' is not read, create or write")
            }
        }
        let update = rules["update"]?.stringValue
        if name == AccountService.userCollection, let who = Self.everyone(update) {
            return record(
                number, line, .notTranslated,
                "write:\(update ?? "") on FFUser lets \(who) change or delete every user; FFUser keeps Roost's rules (each user changes only their own profile); add it by hand only if you mean it"
            )
        }
        var policy = collections[name]?.objectValue ?? JSONObject()
        policy["rules"] = .object(rules)
        collections[name] = .object(policy)
        let warning = Self.everyone(update).map { who in
            name == AppDefinition.groupCollection
                ? "\(who) may change or delete every group the definition does not declare, members included, and rules and access lists trust groups: declare the groups your app relies on (\"groups\") or use write:creator"
                : "\(who) may change or delete every object in \(name), as FatFractal allowed"
        }
        record(number, line, .translated, "collections.\(name).rules", warning: warning)
    }

    /// Who a rule lets change everything, when it is that broad.
    private static func everyone(_ rule: String?) -> String? {
        switch rule {
        case "public": "anyone, even without logging in,"
        case "loggedIn": "any logged-in user"
        default: nil
        }
    }

    /// Fails closed: the collection's every operation becomes `none` (administrators and system
    /// scripts pass every rule), so an app that relied on the restriction stays restricted.
    private mutating func close(_ name: String, _ line: String, _ number: Int, _ why: String) {
        var policy = collections[name]?.objectValue ?? JSONObject()
        let none = JSONValue.string("none")
        policy["rules"] = .object(
            JSONObject(uniqueMembers: [("read", none), ("create", none), ("update", none), ("delete", none)]))
        collections[name] = .object(policy)
        record(
            number, line, .notTranslated,
            "\(why): collections.\(name) is closed (every rule none: only administrators and system scripts) until you write its rules in roost.json"
        )
    }

    /// `CREATE OBJECTTYPE T (member type, …)`: Roost is schemaless; a `BYTEARRAY <mime>` member's
    /// type is what its upload's `Content-Type` says.
    private mutating func objectType(_ line: String, number: Int) {
        if line.uppercased().contains("BYTEARRAY") || line.uppercased().contains("REFERENCE") {
            record(
                number, line, .notNeeded,
                "Roost is schemaless: a blob member takes its type from the upload's Content-Type, a reference is {\"ffUrl\": …}"
            )
        } else {
            record(number, line, .notNeeded, "Roost is schemaless: object types need no declaration")
        }
    }

    static func collectionName(_ text: String) -> String? {
        let name = text.hasPrefix("/") ? String(text.dropFirst()) : text
        return ObjectService.isValidCollection(name) ? name : nil
    }

    /// The Roost rule for a FatFractal principal or comma-separated list of them; nil when one
    /// has no equivalent (a user group other than `system.admins`, `object.…` access lists).
    static func rule(_ text: String) -> String? {
        var allowed: [String] = []
        for principal in text.split(separator: ",", omittingEmptySubsequences: false) {
            guard let rule = principalRule(principal.lowercased()) else { return nil }
            if rule != "none", !allowed.contains(rule) { allowed.append(rule) }
        }
        if allowed.contains("public") { return "public" }
        if allowed.count <= 1 { return allowed.first ?? "none" }
        return allowed.map { $0.contains(" ") ? "(\($0))" : $0 }.joined(separator: " or ")
    }

    private static func principalRule(_ principal: String) -> String? {
        switch principal {
        case "public": "public"
        // Roost's administrators and scripts running as system pass every rule; `system.admins`
        // is FatFractal's group of administrators.
        case "none", "system", "system.admins": "none"
        case "loggedin": "loggedIn"
        case "creator", "owner": "createdBy eq @user.guid"
        default: nil
        }
    }

    /// The definition as indented JSON text.
    public var definitionText: String {
        var output = ""
        Self.write(.object(definition), indent: "", into: &output)
        return output + "\n"
    }

    static func write(_ value: JSONValue, indent: String, into output: inout String) {
        switch value {
        case .object(let object) where !object.isEmpty:
            output += "{\n"
            for (index, member) in object.members.enumerated() {
                output += indent + "  " + JSONWriter.string(.string(member.key)) + ": "
                write(member.value, indent: indent + "  ", into: &output)
                output += index == object.count - 1 ? "\n" : ",\n"
            }
            output += indent + "}"
        default:
            output += JSONWriter.string(value)
        }
    }
}
