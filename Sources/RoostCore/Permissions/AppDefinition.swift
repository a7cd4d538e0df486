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
        /// Top-level fields only the object's creator and administrators may see or query on.
        public var ownerOnlyFields: Set<String> = []
        /// Fields to keep an index on.
        public var indexes: [FieldPath] = []

        public init() {}

        /// The rule for an operation, falling back to `defaults` when undeclared.
        func rule(_ operation: Operation, defaults: CollectionPolicy) -> RuleExpression {
            if let rule = rules[operation] { return rule }
            if operation == .list, let read = rules[.read] { return read }
            if let rule = defaults.rules[operation] { return rule }
            return operation == .list ? defaults.rules[.read] ?? .constant(true) : .constant(false)
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
        /// Whether objects may be created in collections the definition does not name.
        public var allowNewCollections = true
        public var registration = Registration.open

        public init() {}
    }

    public var settings = Settings()
    /// Declared collections by name; `*` applies to every collection not named.
    public var collections: [String: CollectionPolicy] = [:]

    public init() {}

    /// FatFractal's defaults: everyone reads, logged-in users create, only the creator changes.
    static let builtInDefaults: CollectionPolicy = {
        var policy = CollectionPolicy()
        policy.rules = [
            .read: .constant(true), .create: .loggedIn,
            .update: ownerRule, .delete: ownerRule,
        ]
        return policy
    }()

    static let ownerRule = RuleExpression.comparison(
        .field(FieldPath("createdBy")!), .eq, .variable(.userGuid))

    /// Users: logged-in users see profiles, only the user (or an admin) changes theirs, and only
    /// the user sees their email. Accounts are created by registration, never through resources.
    static let builtInUsers: CollectionPolicy = {
        var policy = CollectionPolicy()
        let itself = RuleExpression.comparison(.field(FieldPath("guid")!), .eq, .variable(.userGuid))
        policy.rules = [
            .read: .loggedIn, .create: .constant(false), .update: itself, .delete: .constant(false),
        ]
        policy.ownerOnlyFields = ["email"]
        return policy
    }()

    /// Groups: visible to logged-in users, managed by their creator.
    static let builtInGroups: CollectionPolicy = {
        var policy = CollectionPolicy()
        policy.rules = [.read: .loggedIn, .create: .loggedIn, .update: ownerRule, .delete: ownerRule]
        return policy
    }()

    /// Whether the collection is declared (by name, not through `*`), or built in.
    public func declares(_ collection: String) -> Bool {
        collections[collection] != nil || collection == "FFUser" || collection == "FFUserGroup"
    }

    /// The policy for a collection: its declaration over the built-in one, each operation falling
    /// back to `*` and then to FatFractal's defaults.
    public func policy(for collection: String) -> (policy: CollectionPolicy, defaults: CollectionPolicy) {
        let wildcard = collections["*"]
        var defaults = Self.builtInDefaults
        for (operation, rule) in wildcard?.rules ?? [:] { defaults.rules[operation] = rule }
        let builtIn: CollectionPolicy? =
            switch collection {
            case "FFUser": Self.builtInUsers
            case "FFUserGroup": Self.builtInGroups
            default: nil
            }
        guard var policy = builtIn else {
            return (collections[collection] ?? wildcard ?? CollectionPolicy(), defaults)
        }
        if let declared = collections[collection] {
            for (operation, rule) in declared.rules { policy.rules[operation] = rule }
            policy.ownerOnlyFields.formUnion(declared.ownerOnlyFields)
            policy.indexes = declared.indexes
        }
        return (policy, defaults)
    }

    /// Every owner-only field name of any collection, for queries that look through references.
    public var allOwnerOnlyFields: Set<String> {
        collections.values.reduce(into: Self.builtInUsers.ownerOnlyFields) {
            $0.formUnion($1.ownerOnlyFields)
        }
    }
}
