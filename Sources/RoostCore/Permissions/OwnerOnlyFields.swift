import RoostJSON
import RoostQuery
import RoostStore

/// Owner-only fields (such as a user's `email`): only the object's creator and administrators see
/// them, sort by them or match on them.
extension Access {
    func ownerOnlyFields(of collection: String) -> Set<String> {
        isAdmin ? [] : definition.policy(for: collection).policy.ownerOnlyFields
    }

    /// The document as this caller may see it.
    func visibleDocument(_ document: [UInt8], in collection: String) throws -> [UInt8] {
        let hidden = ownerOnlyFields(of: collection)
        guard !hidden.isEmpty else { return document }
        guard case .object(var object) = try JSONParser.parse(document) else { return document }
        if let caller, object["createdBy"]?.stringValue == caller.userGuid { return document }
        guard object.keys.contains(where: hidden.contains) else { return document }
        for field in hidden { object[field] = nil }
        return JSONWriter.bytes(.object(object))
    }

    /// The documents as this caller may see them.
    func visibleDocuments(_ documents: [[UInt8]], in collection: String) throws -> [[UInt8]] {
        guard !ownerOnlyFields(of: collection).isEmpty else { return documents }
        return try documents.map { try visibleDocument($0, in: collection) }
    }

    /// The filter with every predicate on an owner-only field limited to the caller's own objects,
    /// so nobody can probe another's hidden values. Read through a reference, a field is judged by
    /// the referenced object's collection and creator instead: see ``referenceAccess()``.
    func limitingOwnerOnlyFields(_ filter: QueryExpression?, in collection: String) -> QueryExpression? {
        guard let filter, !isAdmin else { return filter }
        let direct = ownerOnlyFields(of: collection)
        guard !direct.isEmpty else { return filter }
        func isHidden(_ path: FieldPath) -> Bool { direct.contains(path.components[0]) }
        func limited(_ expression: QueryExpression, _ path: FieldPath) -> QueryExpression {
            guard isHidden(path) else { return expression }
            guard let caller else { return .constant(false) }
            return .and([.comparison(FieldPath("createdBy")!, .eq, .string(caller.userGuid)), expression])
        }
        func rewrite(_ expression: QueryExpression) -> QueryExpression {
            switch expression {
            case .and(let parts): return .and(parts.map(rewrite))
            case .or(let parts): return .or(parts.map(rewrite))
            case .not(let inner): return .not(rewrite(inner))
            case .comparison(let path, _, _), .matches(let path, _), .contains(let path, _, _):
                return limited(expression, path)
            case .randomPick, .constant: return expression
            }
        }
        return rewrite(filter)
    }

    /// Refuses sorting by an owner-only field, whose order would reveal the values.
    func checkSort(_ keys: [SortKey], in collection: String) throws {
        let hidden = ownerOnlyFields(of: collection)
        for key in keys where hidden.contains(key.field.components[0]) {
            throw RoostError.invalidParameter(
                "sort", "'\(key.field)' is visible only to each object's owner, so it cannot be sorted on.")
        }
    }
}

extension Access {
    /// What this caller may see of referenced objects, for queries that read through references:
    /// each collection's list restriction and owner-only fields, judged on the referenced object.
    func referenceAccess() -> ReferenceAccess {
        guard !isAdmin else { return .unrestricted }
        var collections: [String: ReferenceAccess.Visibility] = [:]
        for name in Set(definition.collections.keys).union(["FFUser", "FFUserGroup"]) where name != "*" {
            collections[name] = ReferenceAccess.Visibility(
                restriction: listRestriction(name), ownerOnlyFields: ownerOnlyFields(of: name))
        }
        // No collection has an empty name, so this is the policy of every collection not named.
        let undeclared = ""
        return ReferenceAccess(
            collections: collections,
            others: ReferenceAccess.Visibility(
                restriction: listRestriction(undeclared), ownerOnlyFields: ownerOnlyFields(of: undeclared)),
            viewer: caller?.userGuid)
    }
}
