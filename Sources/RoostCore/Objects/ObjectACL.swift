import RoostJSON
import RoostStore

/// Per-object access lists, FatFractal's `ffACL`: `{readUsers, readGroups, writeUsers, writeGroups}`.
extension ObjectService {
    /// The lists an access list has, in the order they are stored.
    static let aclLists = ["readUsers", "readGroups", "writeUsers", "writeGroups"]
    /// The most entries one list may hold.
    public static let maximumACLEntries = 1000

    /// The object's access list, `{}` when it has none; needs read access.
    public func acl(in collection: String, guid: String, caller: Principal?) async throws -> [UInt8] {
        let object = try await object(in: collection, guid: guid, caller: caller)
        return object.acl ?? Array("{}".utf8)
    }

    /// Sets the object's access list; needs update access (under the list in force, if any).
    public func setACL(
        in collection: String, guid: String, body: JSONObject, ifMatch: String?, caller: Principal?,
        idempotency: IdempotencyMark? = nil
    ) async throws -> [UInt8] {
        let acl = try Self.normalizedACL(body)
        let object = try await modify(
            collection: collection, guid: guid, ifMatch: ifMatch, body: nil, caller: caller,
            idempotency: idempotency,
            { fields, _ in fields }, changingACL: { _ in acl })
        return object.acl ?? acl
    }

    /// Removes the access list, so the collection's rules apply again.
    public func removeACL(
        in collection: String, guid: String, ifMatch: String?, caller: Principal?,
        idempotency: IdempotencyMark? = nil
    ) async throws {
        _ = try await modify(
            collection: collection, guid: guid, ifMatch: ifMatch, body: nil, caller: caller,
            idempotency: idempotency,
            { fields, _ in fields }, changingACL: { _ in nil })
    }

    /// All four lists, each of strings: user guids or `*` for users, group guids for groups.
    static func normalizedACL(_ body: JSONObject) throws -> [UInt8] {
        for key in body.keys where !aclLists.contains(key) {
            throw RoostError.invalidField(
                key,
                "An access list has only readUsers, readGroups, writeUsers and writeGroups; '\(key.prefix(40))' is not one."
            )
        }
        var normalized = JSONObject()
        for list in aclLists {
            var entries: [JSONValue] = []
            var seen: Set<String> = []
            switch body[list] {
            case nil, .null?: break
            case .array(let elements)? where elements.count <= maximumACLEntries:
                for element in elements {
                    guard let text = element.stringValue,
                        isValidGuid(text) || (text == "*" && list.hasSuffix("Users"))
                    else {
                        throw RoostError.invalidField(
                            list,
                            "\(list) holds \(list.hasSuffix("Users") ? "user guids, or \"*\" for everyone" : "group guids"); '\((element.stringValue ?? element.typeName).prefix(40))' is not one."
                        )
                    }
                    if seen.insert(text).inserted { entries.append(element) }
                }
            default:
                throw RoostError.invalidField(
                    list, "\(list) is an array of at most \(maximumACLEntries) strings.")
            }
            normalized[list] = .array(entries)
        }
        return JSONWriter.bytes(.object(normalized))
    }
}
