import RoostJSON
import RoostQuery
import RoostStore

/// What one subscription of an event stream asks for: a collection, optionally one object of it
/// or the objects matching a query.
public struct EventSubscription: Sendable, Equatable {
    public var collection: String
    public var guid: String?
    /// A query in Roost's language, such as `(gender eq 'male')`.
    public var query: String?

    public init(collection: String, guid: String? = nil, query: String? = nil) {
        self.collection = collection
        self.guid = guid
        self.query = query
    }

    /// Reads `Collection`, `Collection/guid` or `Collection/(query)`, as resource paths name them.
    public static func parse(_ text: String) throws -> EventSubscription {
        guard let slash = text.firstIndex(of: "/") else { return EventSubscription(collection: text) }
        let collection = String(text[..<slash])
        let rest = String(text[text.index(after: slash)...])
        return rest.hasPrefix("(")
            ? EventSubscription(collection: collection, query: rest)
            : EventSubscription(collection: collection, guid: rest)
    }
}

/// A subscription checked and bound to its caller: what it matches, and which rule decides
/// whether the caller may see an object (the read rule for one object, as a GET does; the list
/// rule otherwise, as a list does).
struct BoundSubscription: Sendable {
    let collection: String
    let guid: String?
    /// The subscription as asked for: equal keys (with equal callers) see equal events.
    let key: String
    /// The query, with owner-only fields limited to the caller's own objects as lists do.
    let filter: QueryExpression?

    init(_ subscription: EventSubscription, access: Access) throws {
        try ObjectService.validate(collection: subscription.collection)
        if let guid = subscription.guid, !ObjectService.isValidGuid(guid) {
            throw RoostError.invalidGuid(guid)
        }
        collection = subscription.collection
        guid = subscription.guid
        key = [subscription.collection, subscription.guid ?? "", subscription.query ?? ""].joined(
            separator: "\u{1F}")
        guard let text = subscription.query else {
            filter = nil
            return
        }
        do {
            let plan = try QueryPlan(QueryParser.parse(text))
            guard !plan.pickRandom else {
                throw QueryError(
                    message: "random(guid) picks one object per request; a subscription cannot use it",
                    column: 1, query: text, expected: [])
            }
            if let filter = plan.filter { try QueryShape(filter).check() }
            filter = access.limitingOwnerOnlyFields(plan.filter, in: collection)
        } catch let error as QueryError {
            throw RoostError.invalidQuery(error, query: text)
        }
    }

    /// Whether the caller sees `object` through this subscription. `evaluable` is the object's
    /// document with its access list, as rules see it.
    func matches(collection: String, guid: String, evaluable: JSONObject, access: Access) -> Bool {
        guard collection == self.collection, self.guid == nil || self.guid == guid else { return false }
        let visibility =
            self.guid == nil ? access.listRestriction(collection) : access.readRestriction(collection)
        if let visibility, !QueryEvaluator.matches(visibility, evaluable) { return false }
        return filter.map { QueryEvaluator.matches($0, evaluable) } ?? true
    }
}

extension AccountService {
    /// Whether the token with this id exists and has not expired: event streams end when not.
    public func tokenIsLive(id: String) async -> Bool {
        guard let token = try? await accounts.token(id: id) else { return false }
        return token.expiresAt > clock.nowMilliseconds()
    }

    /// The principal with its user's current groups and flags; nil when the user is gone or
    /// deactivated. A failed read keeps the principal as it was.
    public func refreshed(_ principal: Principal) async -> Principal? {
        do {
            return try await current(principal)
        } catch {
            return principal
        }
    }

    /// The principal with its user's current groups and flags; nil when the user is gone or
    /// deactivated; throws when the user cannot be read.
    public func current(_ principal: Principal) async throws -> Principal? {
        guard let facts = try await objects.accessFacts(userGuid: principal.userGuid), facts.isActive else {
            return nil
        }
        let current = Principal(
            userGuid: principal.userGuid, tokenId: principal.tokenId, isAdmin: facts.isAdmin,
            groups: facts.groups)
        return principal.isAdminWithheld ? current.withholdingAdmin() : current
    }
}
