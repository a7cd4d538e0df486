import RoostJSON
import RoostQuery
import RoostStore

/// What one caller may do under the running app definition.
///
/// Lists get the read rule as a SQL restriction, so a caller never sees, counts or draws an object
/// they may not read; single objects are checked in memory with the same semantics.
///
/// An object with an access list (`ffACL`) is governed by it instead of by the collection's read,
/// update and delete rules: its creator, the users and groups it names for writing, and (for
/// reading) those it names for reading. `"*"` among the users means everyone.
public struct Access: Sendable {
    public let caller: Principal?
    let definition: AppDefinition

    public init(caller: Principal?, definition: AppDefinition) {
        self.caller = caller
        self.definition = definition
    }

    var isAdmin: Bool { caller?.isAdmin == true }

    private func rule(_ operation: AppDefinition.Operation, in collection: String) -> RuleExpression {
        let (policy, defaults) = definition.policy(for: collection)
        return policy.rule(operation, defaults: defaults)
    }

    /// The restriction a list of the collection gets; nil when the caller sees everything.
    func listRestriction(_ collection: String) -> QueryExpression? {
        guard !isAdmin else { return nil }
        let bound = RuleBinder(caller: caller, body: nil).bind(rule(.list, in: collection))
        return governed(by: bound, grant: grant(reading: true))
    }

    /// `(no ACL and rule) or (ACL and it grants)`.
    private func governed(by rule: QueryExpression, grant: QueryExpression) -> QueryExpression {
        let noList = QueryExpression.comparison(Self.aclPath, .eq, .null)
        return RuleBinder.or([
            RuleBinder.and([noList, rule]), RuleBinder.and([RuleBinder.not(noList), grant]),
        ])
    }

    private static let aclPath = FieldPath("ffACL")!

    private func grant(reading: Bool) -> QueryExpression {
        var users = ["*"]
        var parts: [QueryExpression] = []
        if let caller {
            users.append(caller.userGuid)
            parts.append(.comparison(FieldPath("createdBy")!, .eq, .string(caller.userGuid)))
        }
        let lists =
            reading
            ? [("readUsers", "readGroups"), ("writeUsers", "writeGroups")] : [("writeUsers", "writeGroups")]
        for (userList, groupList) in lists {
            parts.append(.contains(FieldPath("ffACL.\(userList)")!, .any, users))
            if let groups = caller?.groups, !groups.isEmpty {
                parts.append(.contains(FieldPath("ffACL.\(groupList)")!, .any, groups))
            }
        }
        return RuleBinder.or(parts)
    }

    /// Whether the caller may read this one object: the `read` rule decides (lists, totals,
    /// random picks and traversals follow `list`), so `"read": "public", "list": "none"` makes
    /// objects reachable by guid but never enumerable.
    func canRead(_ object: StoredObject) throws -> Bool {
        guard !isAdmin else { return true }
        let bound = RuleBinder(caller: caller, body: nil).bind(rule(.read, in: object.collection))
        // Without an access list, a rule that folded to a constant decides without parsing the
        // document: the common case of GET by id on a public collection.
        if object.acl == nil, case .constant(let allowed) = bound { return allowed }
        let restriction = governed(by: bound, grant: grant(reading: true))
        return QueryEvaluator.matches(restriction, try Self.evaluable(object))
    }

    /// What reading one object of the collection needs, as a restriction on the object (with its
    /// access list as `ffACL`); nil when the caller reads everything. ``canRead(_:)`` in a form
    /// that checks many objects against one binding of the rule.
    func readRestriction(_ collection: String) -> QueryExpression? {
        guard !isAdmin else { return nil }
        let bound = RuleBinder(caller: caller, body: nil).bind(rule(.read, in: collection))
        return governed(by: bound, grant: grant(reading: true))
    }

    /// Throws 404 unless the caller may read the object, so guids of hidden objects do not leak.
    func checkRead(_ object: StoredObject) throws {
        guard try canRead(object) else {
            throw RoostError.notFound(collection: object.collection, guid: object.guid)
        }
    }

    /// Checks a create against the collection's create rule, with the new object and body.
    func checkCreate(_ object: StoredObject, body: JSONObject) throws {
        guard !isAdmin else { return }
        if !definition.settings.allowNewCollections, !definition.declares(object.collection) {
            throw RoostError.collectionNotAllowed(object.collection)
        }
        // A group's guid is what rules and access lists name: a client may not pick one, or it
        // could claim a group that a rule trusts before anyone holds it.
        if object.collection == AppDefinition.groupCollection, body["guid"] != nil {
            throw RoostError.groupGuidNotAllowed
        }
        let bound = RuleBinder(caller: caller, body: body).bind(rule(.create, in: object.collection))
        guard QueryEvaluator.matches(bound, try Self.evaluable(object)) else {
            throw denial(.create, object, byACL: false)
        }
    }

    /// What of a create can be decided without its body (before it is read): whether the
    /// collection may come into being, and a create rule that does not look at the body.
    func checkCreateBeforeBody(in collection: String) throws {
        guard !isAdmin else { return }
        if !definition.settings.allowNewCollections, !definition.declares(collection) {
            throw RoostError.collectionNotAllowed(collection)
        }
        let rule = rule(.create, in: collection)
        guard !rule.readsRequestBody,
            case .constant(false) = RuleBinder(caller: caller, body: nil).bind(rule)
        else { return }
        let placeholder = StoredObject(
            collection: collection, guid: "", document: [], createdBy: nil, createdAt: 0, updatedBy: nil,
            updatedAt: 0, version: 0, acl: nil)
        throw denial(.create, placeholder, byACL: false)
    }

    /// Checks an update or delete of `object` (as stored now); `body` is what the request sent.
    /// 404 when the caller cannot even read it, 401 for anonymous callers, 403 otherwise.
    func checkWrite(_ operation: AppDefinition.Operation, _ object: StoredObject, body: JSONObject?) throws {
        guard !isAdmin else { return }
        let bound = RuleBinder(caller: caller, body: body).bind(rule(operation, in: object.collection))
        let evaluable = try Self.evaluable(object)
        guard QueryEvaluator.matches(governed(by: bound, grant: grant(reading: false)), evaluable) else {
            try checkRead(object)
            throw denial(operation, object, byACL: object.acl != nil)
        }
    }

    /// 401 for anonymous callers, 403 otherwise; `details` say which rule refused (rules are app
    /// configuration, not secrets; an access list is named, not shown).
    private func denial(_ operation: AppDefinition.Operation, _ object: StoredObject, byACL: Bool)
        -> RoostError
    {
        let (policy, defaults) = definition.policy(for: object.collection)
        var text = policy.resolved(operation, defaults: defaults).text
        if byACL {
            text = "the object's access list (ffACL)"
        } else if object.collection == AppDefinition.groupCollection, definition.groups[object.guid] != nil {
            text = "declared in the app definition: only administrators and the group's managers change it"
        }
        let details = RoostError.details([
            "collection": .string(object.collection), "operation": .string(operation.rawValue),
            "rule": .string(text),
        ])
        let base: RoostError =
            caller == nil
            ? .loginRequired : .forbidden("The app's rules do not let you do this to this object.")
        return RoostError(status: base.status, code: base.code, message: base.message, details: details)
    }

    /// The object's document with its access list, as rules see it.
    static func evaluable(_ object: StoredObject) throws -> JSONObject {
        guard case .object(var document) = try JSONParser.parse(object.document) else {
            throw RoostError.internalError
        }
        // Only the access-list column counts, as in SQL: an `ffACL` field that reached a document
        // (a registration before it was refused) is no access list.
        document["ffACL"] = try object.acl.map { try JSONParser.parse($0) }
        return document
    }
}

extension RoostError {
    static let groupGuidNotAllowed = RoostError(
        status: 403, code: .groupGuidNotAllowed,
        message:
            "Only an administrator may choose a group's guid; create the group without one, or declare it under 'groups' in the app definition."
    )

    static func groupGuidRetired(_ guid: String) -> RoostError {
        RoostError(
            status: 409, code: .groupGuidRetired,
            message:
                "A group with the guid '\(guid)' existed and was deleted; a group's guid is never used again.",
            details: details(["collection": .string(AppDefinition.groupCollection), "guid": .string(guid)]))
    }

    static func collectionNotAllowed(_ collection: String) -> RoostError {
        RoostError(
            status: 403, code: .collectionNotAllowed,
            message:
                "The app definition does not declare the collection '\(collection)' and does not allow new ones; add it to roost.json.",
            details: details(["collection": .string(collection)]))
    }
}
