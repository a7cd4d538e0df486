import RoostJSON
import RoostQuery

/// Why an app definition was refused: the field at fault (a dotted path such as
/// `collections.Post.rules.update`), the line and column when the JSON itself is broken, and what
/// to do.
public struct AppDefinitionError: Error, Sendable, Equatable, CustomStringConvertible {
    public let field: String?
    public let line: Int?
    public let column: Int?
    public let message: String

    public var description: String {
        var place: [String] = []
        if let line, let column { place.append("line \(line), column \(column)") }
        if let field { place.append(field) }
        return place.isEmpty ? message : "\(place.joined(separator: ", ")): \(message)"
    }

    static func at(_ field: String, _ message: String) -> AppDefinitionError {
        AppDefinitionError(field: field, line: nil, column: nil, message: message)
    }
}

extension AppDefinition {
    /// The largest definition file accepted.
    public static let maximumBytes = 1 << 20

    /// Parses `roost.json` with the app's script modules (source by module id, `scripts/Name`).
    /// Unknown keys are errors: a misspelt rule must not silently fall back to a default.
    public static func parse(_ bytes: [UInt8], modules: [String: String] = [:]) throws(AppDefinitionError)
        -> AppDefinition
    {
        guard bytes.count <= maximumBytes else {
            throw AppDefinitionError(
                field: nil, line: nil, column: nil, message: "the file is larger than 1 MiB")
        }
        let root: JSONValue
        do {
            root = try JSONParser.parse(bytes)
        } catch {
            let (line, column) = position(of: error.offset, in: bytes)
            throw AppDefinitionError(
                field: nil, line: line, column: column, message: "not valid JSON: \(error.reason)")
        }
        guard case .object(let top) = root else {
            throw .at("(top level)", "the definition is a JSON object with 'settings' and 'collections'")
        }
        try allowOnly(
            [
                "settings", "collections", "groups", "cors", "compatibility", "handlers", "extensions",
                "serverScripts", "hosting",
            ],
            in: top,
            at: "")
        var definition = AppDefinition()
        definition.scripts = try parseScripts(top, modules: modules)
        if let hosting = top["hosting"] { definition.hosting = try parseHosting(hosting) }
        if let compatibility = top["compatibility"] {
            guard let text = compatibility.stringValue, let parsed = Compatibility(rawValue: text) else {
                throw .at("compatibility", "'roost' (the default) or 'fatfractal'")
            }
            definition.compatibility = parsed
        }
        if let settings = top["settings"] { definition.settings = try parseSettings(settings) }
        if let groups = top["groups"] { definition.groups = try parseGroups(groups) }
        if let cors = top["cors"] { definition.cors = try parseCORS(cors) }
        if let collections = top["collections"] {
            guard case .object(let members) = collections else {
                throw .at("collections", "an object whose keys are collection names (or '*')")
            }
            for (name, value) in members.members {
                guard name == "*" || ObjectService.isValidCollection(name) else {
                    throw .at(
                        "collections.\(name)",
                        "a collection name is a letter, then up to 63 letters, digits or '_' (or '*' for all others)"
                    )
                }
                definition.collections[name] = try parseCollection(value, at: "collections.\(name)")
            }
        }
        definition.sourceText = bytes
        return definition
    }

    /// The most groups a definition declares, and managers a group names.
    public static let maximumDeclaredGroups = 1000

    /// `{"hr": {"groupName": "Human resources", "managers": ["<user guid>", ...]}, "editors": {}}`.
    private static func parseGroups(_ value: JSONValue) throws(AppDefinitionError) -> [String: DeclaredGroup]
    {
        guard case .object(let members) = value, members.members.count <= maximumDeclaredGroups else {
            throw .at(
                "groups",
                "an object of at most \(maximumDeclaredGroups) groups by guid, such as {\"hr\": {\"managers\": [\"<user guid>\"]}}"
            )
        }
        var groups: [String: DeclaredGroup] = [:]
        for (guid, body) in members.members {
            let place = "groups.\(guid)"
            guard ObjectService.isValidGuid(guid) else {
                throw .at(place, "a group's guid is 1 to 64 letters, digits, '_' or '-'")
            }
            guard case .object(let fields) = body else {
                throw .at(place, "a group is an object with an optional 'groupName' and 'managers'")
            }
            try allowOnly(["groupName", "managers"], in: fields, at: place + ".")
            var group = DeclaredGroup(groupName: guid)
            if let name = fields["groupName"] {
                guard let text = name.stringValue, (1...256).contains(text.utf8.count) else {
                    throw .at(place + ".groupName", "a string of 1 to 256 bytes")
                }
                group.groupName = text
            }
            if let managers = fields["managers"] {
                guard case .array(let elements) = managers, elements.count <= maximumDeclaredGroups else {
                    throw .at(place + ".managers", "an array of at most \(maximumDeclaredGroups) user guids")
                }
                for element in elements {
                    // Guids, not user names: a name nobody holds yet could be registered by anyone.
                    guard let text = element.stringValue, ObjectService.isValidGuid(text) else {
                        throw .at(
                            place + ".managers",
                            "'\((element.stringValue ?? element.typeName).prefix(64))' is not a user guid (managers are named by guid, not by user name)"
                        )
                    }
                    group.managers.append(text)
                }
            }
            groups[guid] = group
        }
        return groups
    }

    /// `{"allowedOrigins": ["https://app.example.com", ...]}`.
    private static func parseCORS(_ value: JSONValue) throws(AppDefinitionError) -> CORSSettings {
        guard case .object(let object) = value else {
            throw .at("cors", "cors is an object such as {\"allowedOrigins\": [\"https://app.example.com\"]}")
        }
        try allowOnly(["allowedOrigins"], in: object, at: "cors.")
        guard let list = object["allowedOrigins"] else { return CORSSettings() }
        guard case .array(let items) = list, items.count <= maximumAllowedOrigins else {
            throw .at("cors.allowedOrigins", "a list of at most \(maximumAllowedOrigins) origins")
        }
        var origins: [String] = []
        for (index, item) in items.enumerated() {
            guard let text = item.stringValue, let origin = normalizedOrigin(text) else {
                throw .at(
                    "cors.allowedOrigins[\(index)]",
                    "an origin is scheme://host[:port] with http or https and no path, such as https://app.example.com, or \"*\" for any"
                )
            }
            origins.append(origin)
        }
        return CORSSettings(allowedOrigins: origins)
    }

    private static func parseHosting(_ value: JSONValue) throws(AppDefinitionError) -> Hosting {
        guard case .object(let object) = value else {
            throw .at(
                "hosting",
                "hosting is an object such as {\"publicDir\": \"webapp\", \"appPrefix\": \"myapp\"}")
        }
        try allowOnly(["publicDir", "appPrefix"], in: object, at: "hosting.")
        var hosting = Hosting()
        if let directory = object["publicDir"] {
            guard let text = directory.stringValue, !text.isEmpty, !text.contains("\0") else {
                throw .at("hosting.publicDir", "the web app's folder, a path")
            }
            hosting.publicDirectory = text
        }
        if let prefix = object["appPrefix"] {
            guard let text = prefix.stringValue, ObjectService.isValidCollection(text), text != "ff" else {
                throw .at(
                    "hosting.appPrefix",
                    "a name of letters, digits and '_' other than 'ff', such as \"myapp\"")
            }
            hosting.appPrefix = text
        }
        return hosting
    }

    /// `{"apple": {"clientIds": ["org.example.app"]}, "google": {...}, "linkVerifiedEmails": false}`.
    private static func parseSignIn(_ value: JSONValue) throws(AppDefinitionError) -> SignIn {
        guard case .object(let object) = value else { throw .at("settings.signIn", "signIn is an object") }
        try allowOnly(
            SignInProvider.allCases.map(\.rawValue) + ["linkVerifiedEmails"], in: object,
            at: "settings.signIn.")
        var signIn = SignIn()
        for provider in SignInProvider.allCases {
            guard let entry = object[provider.rawValue] else { continue }
            let path = "settings.signIn.\(provider.rawValue)"
            guard case .object(let fields) = entry else {
                throw .at(path, "an object such as {\"clientIds\": [\"org.example.app\"]}")
            }
            try allowOnly(["clientIds"], in: fields, at: path + ".")
            guard case .array(let ids)? = fields["clientIds"],
                let strings = Optional(ids.compactMap(\.stringValue)), strings.count == ids.count,
                strings.allSatisfy({ !$0.isEmpty && $0.utf8.count <= 256 }), ids.count <= 32
            else { throw .at(path + ".clientIds", "a list of up to 32 client ids (strings)") }
            signIn.clientIds[provider] = strings
        }
        if let link = object["linkVerifiedEmails"] {
            guard case .bool(let flag) = link else {
                throw .at("settings.signIn.linkVerifiedEmails", "true or false")
            }
            signIn.linkVerifiedEmails = flag
        }
        return signIn
    }

    private static func parseSettings(_ value: JSONValue) throws(AppDefinitionError) -> Settings {
        guard case .object(let object) = value else { throw .at("settings", "settings is an object") }
        try allowOnly(
            [
                "sessionPolicy", "tokenLifetime", "allowNewCollections", "registration",
                "allowAutoRegistration", "pushInactive", "refreshTokens", "accessTokenLifetime",
                "signIn", "emailVerification",
            ],
            in: object,
            at: "settings.")
        var settings = Settings()
        if let policy = object["sessionPolicy"] {
            guard let text = policy.stringValue, let parsed = SessionPolicy(rawValue: text) else {
                throw .at(
                    "settings.sessionPolicy",
                    "one of \(SessionPolicy.allCases.map { "'\($0.rawValue)'" }.joined(separator: ", "))")
            }
            settings.sessionPolicy = parsed
        }
        if let lifetime = object["tokenLifetime"] {
            guard let seconds = lifetime.integerValue, (60...31_622_400).contains(seconds) else {
                throw .at("settings.tokenLifetime", "seconds, from 60 to 31622400 (a year)")
            }
            settings.tokenLifetime = Int(seconds)
        }
        if let mode = object["refreshTokens"] {
            guard let text = mode.stringValue, let parsed = RefreshMode(rawValue: text) else {
                throw .at("settings.refreshTokens", "'off', 'optional' or 'always'")
            }
            settings.refreshTokens = parsed
        }
        if let lifetime = object["accessTokenLifetime"] {
            guard let seconds = lifetime.integerValue, (60...86_400).contains(seconds) else {
                throw .at("settings.accessTokenLifetime", "seconds, from 60 to 86400 (a day)")
            }
            settings.accessTokenLifetime = Int(seconds)
        }
        if let signIn = object["signIn"] { settings.signIn = try parseSignIn(signIn) }
        if let mode = object["emailVerification"] {
            guard let text = mode.stringValue, let parsed = EmailVerificationMode(rawValue: text) else {
                throw .at("settings.emailVerification", "'off', 'optional' or 'required'")
            }
            settings.emailVerification = parsed
        }
        if let inactive = object["pushInactive"] {
            guard case .bool(let flag) = inactive else { throw .at("settings.pushInactive", "true or false") }
            settings.pushInactive = flag
        }
        if let allow = object["allowNewCollections"] {
            guard case .bool(let flag) = allow else {
                throw .at("settings.allowNewCollections", "true or false")
            }
            settings.allowNewCollections = flag
        }
        if let auto = object["allowAutoRegistration"] {
            guard case .bool(let flag) = auto else {
                throw .at("settings.allowAutoRegistration", "true or false")
            }
            settings.allowAutoRegistration = flag
        }
        if let registration = object["registration"] {
            guard let text = registration.stringValue, let parsed = Registration(rawValue: text) else {
                throw .at("settings.registration", "'open' or 'closed'")
            }
            settings.registration = parsed
        }
        return settings
    }

    private static func parseCollection(_ value: JSONValue, at field: String) throws(AppDefinitionError)
        -> CollectionPolicy
    {
        guard case .object(let object) = value else {
            throw .at(field, "a collection is an object with 'rules', 'ownerOnlyFields' and 'indexes'")
        }
        try allowOnly(["rules", "ownerOnlyFields", "indexes"], in: object, at: field + ".")
        var policy = CollectionPolicy()
        if let rules = object["rules"] {
            guard case .object(let members) = rules else {
                throw .at(
                    field + ".rules",
                    "an object such as {\"read\": \"public\", \"update\": \"createdBy eq @user.guid\"}")
            }
            try allowOnly(Operation.allCases.map(\.rawValue), in: members, at: field + ".rules.")
            for (name, value) in members.members {
                let place = "\(field).rules.\(name)"
                guard let text = value.stringValue else {
                    throw .at(
                        place, "a rule is a string, such as \"loggedIn\" or \"createdBy eq @user.guid\"")
                }
                do {
                    policy.set(Operation(rawValue: name)!, try QueryParser.parseRule(text), text: text)
                } catch {
                    throw .at(place, error.message)
                }
            }
        }
        if let fields = object["ownerOnlyFields"] {
            let names = try identifiers(fields, at: field + ".ownerOnlyFields")
            for name in names where ObjectService.metadataFields.contains(name) {
                throw .at(field + ".ownerOnlyFields", "'\(name)' is metadata and is always visible")
            }
            policy.ownerOnlyFields = Set(names)
        }
        if let indexes = object["indexes"] {
            guard case .array(let elements) = indexes, elements.count <= 64 else {
                throw .at(
                    field + ".indexes",
                    "an array of at most 64 field paths, such as [\"name\", \"author.city\"]")
            }
            for element in elements {
                guard let text = element.stringValue, let path = FieldPath(text) else {
                    throw .at(
                        field + ".indexes", "'\(element.stringValue ?? element.typeName)' is not a field path"
                    )
                }
                policy.indexes.append(path)
            }
        }
        return policy
    }

    private static func identifiers(_ value: JSONValue, at field: String) throws(AppDefinitionError)
        -> [String]
    {
        guard case .array(let elements) = value else { throw .at(field, "an array of field names") }
        var names: [String] = []
        for element in elements {
            guard let name = element.stringValue, FieldPath.isIdentifier(name) else {
                throw .at(field, "'\(element.stringValue ?? element.typeName)' is not a top-level field name")
            }
            names.append(name)
        }
        return names
    }

    static func allowOnly(_ keys: [String], in object: JSONObject, at prefix: String)
        throws(AppDefinitionError)
    {
        for key in object.keys where !keys.contains(key) {
            throw .at(
                prefix + key, "unknown key; expected \(keys.map { "'\($0)'" }.joined(separator: ", "))")
        }
    }

    /// The 1-based line and column of a byte offset.
    static func position(of offset: Int, in bytes: [UInt8]) -> (line: Int, column: Int) {
        var line = 1
        var column = 1
        for byte in bytes.prefix(offset) {
            if byte == UInt8(ascii: "\n") {
                line += 1
                column = 1
            } else if byte & 0xC0 != 0x80 {
                column += 1
            }
        }
        return (line, column)
    }
}
