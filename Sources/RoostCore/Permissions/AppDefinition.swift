import RoostJSON
import RoostQuery

/// What an app declares in `roost.json`: per-collection access rules, owner-only fields and
/// indexes, and app-wide settings. Anything it leaves out takes FatFractal's defaults.
public struct AppDefinition: Sendable {
    /// The operations a rule can govern.
    public enum Operation: String, Sendable, CaseIterable {
        case list, read, create, update, delete
    }

    /// One collection's declaration.
    public struct CollectionPolicy: Sendable {
        /// Declared rules; an operation without one falls back (list to read, others to defaults).
        public var rules: [Operation: RuleExpression] = [:]
        /// Each rule as written, to say which rule refused a write.
        public var ruleTexts: [Operation: String] = [:]
        /// Top-level fields only the object's creator and administrators may see or query on.
        public var ownerOnlyFields: Set<String> = []
        /// Fields to keep an index on.
        public var indexes: [FieldPath] = []

        public init() {}

        /// The rule for an operation, falling back to `defaults` when undeclared.
        func rule(_ operation: Operation, defaults: CollectionPolicy) -> RuleExpression {
            resolved(operation, defaults: defaults).rule
        }

        /// The rule for an operation and its text: the declared one, else (for `list`) the
        /// declared `read`, else the default's.
        func resolved(_ operation: Operation, defaults: CollectionPolicy) -> (
            rule: RuleExpression, text: String
        ) {
            func entry(_ policy: CollectionPolicy, _ operation: Operation) -> (RuleExpression, String)? {
                policy.rules[operation].map { ($0, policy.ruleTexts[operation] ?? "") }
            }
            if let found = entry(self, operation) { return found }
            if operation == .list, let read = entry(self, .read) { return read }
            if let found = entry(defaults, operation) { return found }
            if operation == .list, let read = entry(defaults, .read) { return read }
            return operation == .list ? (.constant(true), "public") : (.constant(false), "none")
        }

        mutating func set(_ operation: Operation, _ rule: RuleExpression, text: String) {
            rules[operation] = rule
            ruleTexts[operation] = text
        }
    }

    /// A group the app declares: created at start, owned by no user; only administrators and the
    /// managers named here change its members.
    public struct DeclaredGroup: Sendable, Equatable {
        /// The `groupName` the group object is created with.
        public var groupName: String
        /// Guids of the users who may change the group besides administrators.
        public var managers: [String] = []

        public init(groupName: String, managers: [String] = []) {
            self.groupName = groupName
            self.managers = managers
        }
    }

    /// Whether anyone may register through `/ff/register`.
    public enum Registration: String, Sendable {
        case open, closed
    }

    /// App-wide settings; nil means the server's command-line value stands.
    public struct Settings: Sendable {
        public var sessionPolicy: SessionPolicy?
        /// Seconds.
        public var tokenLifetime: Int?
        /// Whether logins get access tokens with rotating refresh tokens.
        public var refreshTokens: RefreshMode?
        /// Seconds an access token of a session that refreshes lives.
        public var accessTokenLifetime: Int?
        /// Whether registration verifies the address (``EmailVerificationMode``).
        public var emailVerification: EmailVerificationMode?
        /// Whether objects may be created in collections the definition does not name.
        public var allowNewCollections = true
        public var registration = Registration.open
        /// FatFractal's `AllowAutoRegistration`: a login of an unknown user name registers it
        /// (FatFractal dialect only).
        public var allowAutoRegistration = false
        /// FatFractal's `PushIsInactive`: the scripts' push calls are logged and send nothing.
        public var pushInactive = false
        /// `signIn`: client ids and email linking for Sign in with Apple and Google.
        public var signIn: SignIn?

        public init() {}
    }

    /// `settings.signIn`; what it leaves out, the server's options decide.
    public struct SignIn: Sendable {
        /// Each named provider's accepted `aud` values.
        public var clientIds: [SignInProvider: [String]] = [:]
        public var linkVerifiedEmails: Bool?

        public init() {}
    }

    /// Which wire format the API speaks to every client (`compatibility`).
    public enum Compatibility: String, Sendable {
        /// Roost's own API; FatFractal's clients are still recognised per request.
        case roost
        /// FatFractal's dialect for every request (see docs/fatfractal.md).
        case fatfractal
    }

    public var settings = Settings()
    /// The wire format spoken to every client.
    public var compatibility = Compatibility.roost
    /// A web app served on the API's origin (`hosting`); `--public-dir` and `--app-prefix` win.
    public var hosting = Hosting()

    /// `{"publicDir": "webapp", "appPrefix": "hoodyoodoo"}`.
    public struct Hosting: Sendable, Equatable {
        /// The web app's folder; a relative path is relative to the definition file's folder.
        public var publicDirectory: String?
        /// FatFractal's app name in URLs: `/<appPrefix>/ff/…` is `/ff/…`.
        public var appPrefix: String?

        public init() {}
    }
    /// Which browser origins may call the API (`cors.allowedOrigins`).
    public var cors = CORSSettings()
    /// Declared collections by name; `*` applies to every collection not named.
    public var collections: [String: CollectionPolicy] = [:]
    /// Declared groups by guid.
    public var groups: [String: DeclaredGroup] = [:]
    /// Server-side handlers, extensions and the script modules they run.
    public var scripts = ScriptSettings()
    /// The collection whose objects are groups.
    public static let groupCollection = "FFUserGroup"
    /// Where the FatFractal dialect keeps grab bag memberships.
    public static let grabBagCollection = "FFGrabBagItem"
    /// The `roost.json` text this definition was parsed from (nil when built in code): what a
    /// runtime change (``FFDLChange``) starts from.
    public internal(set) var sourceText: [UInt8]?

    public init() {}

    /// Browser apps on other origins that may call the API: each origin exactly as a browser sends
    /// it in `Origin` (`https://app.example.com`, `http://localhost:3000`), or `*` for any.
    public struct CORSSettings: Sendable, Equatable {
        public var allowedOrigins: [String] = []

        public init(allowedOrigins: [String] = []) { self.allowedOrigins = allowedOrigins }
    }

    /// The most origins a definition or `--cors-origins` lists.
    public static let maximumAllowedOrigins = 256

    /// An origin in the form browsers send it (lower-cased `scheme://host[:port]`, http or https,
    /// no path), or `*`; nil for anything else.
    public static func normalizedOrigin(_ text: String) -> String? {
        if text == "*" { return text }
        let lowered = text.lowercased()
        let scheme: Substring
        if lowered.hasPrefix("https://") {
            scheme = "https://"
        } else if lowered.hasPrefix("http://") {
            scheme = "http://"
        } else {
            return nil
        }
        var rest = lowered.dropFirst(scheme.count)
        var host: Substring
        if rest.first == "[" {
            guard let close = rest.firstIndex(of: "]") else { return nil }
            host = rest[...close]
            guard host.dropFirst().dropLast().allSatisfy({ $0.isHexDigit || $0 == ":" || $0 == "." }),
                host.count > 2
            else { return nil }
            rest = rest[rest.index(after: close)...]
        } else {
            host = rest.prefix(while: { $0 != ":" })
            guard !host.isEmpty, host.count <= 253,
                host.allSatisfy({ ($0.isASCII && ($0.isLetter || $0.isNumber)) || $0 == "-" || $0 == "." })
            else { return nil }
            rest = rest[host.endIndex...]
        }
        if !rest.isEmpty {
            let port = rest.dropFirst()
            guard rest.first == ":", (1...5).contains(port.count), port.allSatisfy(\.isASCII),
                port.allSatisfy(\.isNumber), let value = Int(port), (1...65535).contains(value)
            else { return nil }
        }
        return lowered
    }

    /// FatFractal's defaults: everyone reads, logged-in users create, only the creator changes.
    static let builtInDefaults: CollectionPolicy = {
        var policy = CollectionPolicy()
        policy.set(.read, .constant(true), text: "public")
        policy.set(.create, .loggedIn, text: "loggedIn")
        policy.set(.update, ownerRule, text: ownerRuleText)
        policy.set(.delete, ownerRule, text: ownerRuleText)
        return policy
    }()

    static let ownerRule = RuleExpression.comparison(
        .field(FieldPath("createdBy")!), .eq, .variable(.userGuid))
    static let ownerRuleText = "createdBy eq @user.guid"

    /// Users: logged-in users see profiles, only the user (or an admin) changes theirs, and only
    /// the user sees their email and whether it is verified. Accounts are created by registration,
    /// never through resources.
    static let builtInUsers: CollectionPolicy = {
        var policy = CollectionPolicy()
        let itself = RuleExpression.comparison(.field(FieldPath("guid")!), .eq, .variable(.userGuid))
        policy.set(.read, .loggedIn, text: "loggedIn")
        policy.set(.create, .constant(false), text: "none")
        policy.set(.update, itself, text: "guid eq @user.guid")
        policy.set(.delete, .constant(false), text: "none")
        policy.ownerOnlyFields = ["email", "emailVerified"]
        return policy
    }()

    /// FatFractal's grab bag memberships (``grabBagCollection``), reached only through their bags (clients are refused the
    /// collection, 403 `collection_reserved`): the dialect has checked the right to update the
    /// parent before it adds or removes, and to read it before it lists.
    static let builtInGrabBagItems: CollectionPolicy = {
        var policy = CollectionPolicy()
        policy.set(.read, .constant(true), text: "public")
        policy.set(.create, .loggedIn, text: "loggedIn")
        policy.set(.update, .constant(false), text: "none")
        policy.set(.delete, .loggedIn, text: "loggedIn")
        return policy
    }()

    /// Groups: visible to logged-in users, managed by their creator.
    static let builtInGroups: CollectionPolicy = {
        var policy = CollectionPolicy()
        policy.set(.read, .loggedIn, text: "loggedIn")
        policy.set(.create, .loggedIn, text: "loggedIn")
        policy.set(.update, ownerRule, text: ownerRuleText)
        policy.set(.delete, ownerRule, text: ownerRuleText)
        return policy
    }()

    /// Whether the collection is declared (by name, not through `*`), or built in.
    public func declares(_ collection: String) -> Bool {
        collections[collection] != nil || collection == "FFUser" || collection == "FFUserGroup"
            || collection == Self.grabBagCollection
    }

    /// The policy for a collection and the defaults its undeclared operations take. A named
    /// collection's undeclared operations take FatFractal's defaults; `*` stands in for every
    /// collection not named. `FFUser` and `FFUserGroup` start from their built-in rules, which a
    /// declaration may override and `*` does not touch.
    public func policy(for collection: String) -> (policy: CollectionPolicy, defaults: CollectionPolicy) {
        let builtIn: CollectionPolicy? =
            switch collection {
            case "FFUser": Self.builtInUsers
            case Self.groupCollection: Self.builtInGroups
            case Self.grabBagCollection: Self.builtInGrabBagItems
            default: nil
            }
        guard var policy = builtIn else {
            return (collections[collection] ?? collections["*"] ?? CollectionPolicy(), Self.builtInDefaults)
        }
        if let declared = collections[collection] {
            for (operation, rule) in declared.rules {
                policy.set(operation, rule, text: declared.ruleTexts[operation] ?? "")
            }
            policy.ownerOnlyFields.formUnion(declared.ownerOnlyFields)
            policy.indexes = declared.indexes
        }
        if collection == Self.groupCollection, !groups.isEmpty { guardDeclaredGroups(&policy) }
        return (policy, Self.builtInDefaults)
    }

    /// Declared groups change only by administrators (who bypass rules) and their managers, and
    /// are deleted only by administrators; other groups keep the rules they had.
    private func guardDeclaredGroups(_ policy: inout CollectionPolicy) {
        let guid = FieldPath("guid")!
        let isDeclared = RuleExpression.or(
            groups.keys.sorted().map { .comparison(.field(guid), .eq, .literal(.string($0))) })
        let byManager = RuleExpression.or(
            groups.sorted { $0.key < $1.key }.map { name, group in
                .and([
                    .comparison(.field(guid), .eq, .literal(.string(name))),
                    .or(group.managers.map { .comparison(.variable(.userGuid), .eq, .literal(.string($0))) }),
                ])
            })
        for operation in [Operation.update, .delete] {
            let (rule, text) = policy.resolved(operation, defaults: Self.builtInDefaults)
            let others = RuleExpression.and([.not(isDeclared), rule])
            policy.set(operation, operation == .update ? .or([others, byManager]) : others, text: text)
        }
    }

    /// Every owner-only field name of any collection, for queries that look through references.
    public var allOwnerOnlyFields: Set<String> {
        collections.values.reduce(into: Self.builtInUsers.ownerOnlyFields) {
            $0.formUnion($1.ownerOnlyFields)
        }
    }
}
