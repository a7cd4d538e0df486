import RoostJSON

/// JSON Merge Patch, RFC 7396.
public enum MergePatch {
    /// `patch` applied to `target`: `null` removes a member, objects merge, anything else replaces.
    /// Members keep their place; new ones follow in the patch's order. One pass over each.
    public static func apply(_ patch: JSONObject, to target: JSONObject) -> JSONObject {
        func merged(_ value: JSONValue, over base: JSONValue?) -> JSONValue {
            guard case .object(let nested) = value else { return value }
            return .object(apply(nested, to: base?.objectValue ?? JSONObject()))
        }
        var members: [(key: String, value: JSONValue)] = []
        members.reserveCapacity(target.count + patch.count)
        for member in target.members {
            guard let change = patch[member.key] else {
                members.append(member)
                continue
            }
            if change != .null { members.append((member.key, merged(change, over: member.value))) }
        }
        for member in patch.members where member.value != .null && target[member.key] == nil {
            members.append((member.key, merged(member.value, over: nil)))
        }
        return JSONObject(uniqueMembers: members)
    }
}
