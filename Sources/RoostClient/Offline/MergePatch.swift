import Foundation

/// JSON merge patches (RFC 7396) between objects' app fields: what an update sends, and how two
/// devices' changes to one object are told apart.
enum MergePatch {
    typealias Fields = [String: JSON]

    /// The patch that turns `base` into `new`: changed and added fields with their new value,
    /// removed ones as `null`, nested objects patched field by field. References
    /// (`{"ffUrl": …}`) and arrays are replaced whole.
    static func diff(from base: Fields, to new: Fields) -> Fields {
        var patch: Fields = [:]
        for (name, value) in new where base[name] != value {
            if case .object(let old)? = base[name], case .object(let updated) = value,
                !isReference(old), !isReference(updated)
            {
                patch[name] = .object(diff(from: old, to: updated))
            } else {
                patch[name] = value
            }
        }
        for name in base.keys where new[name] == nil { patch[name] = .null }
        return patch
    }

    /// `fields` with `patch` applied, as the server applies it.
    static func apply(_ patch: Fields, to fields: Fields) -> Fields {
        var result = fields
        for (name, value) in patch {
            switch value {
            case .null: result[name] = nil
            case .object(let inner) where !isReference(inner):
                if case .object(let current)? = result[name], !isReference(current) {
                    result[name] = .object(apply(inner, to: current))
                } else {
                    result[name] = .object(apply(inner, to: [:]))
                }
            default: result[name] = value
            }
        }
        return result
    }

    /// The dotted paths a patch sets or removes, down to its leaves.
    static func paths(of patch: Fields, under prefix: String = "") -> [String] {
        patch.flatMap { name, value -> [String] in
            let path = prefix.isEmpty ? name : prefix + "." + name
            if case .object(let inner) = value, !isReference(inner), !inner.isEmpty {
                return paths(of: inner, under: path)
            }
            return [path]
        }.sorted()
    }

    /// The patch without the given paths (and anything under them).
    static func removing(_ removed: Set<String>, from patch: Fields, under prefix: String = "") -> Fields {
        var result: Fields = [:]
        for (name, value) in patch {
            let path = prefix.isEmpty ? name : prefix + "." + name
            if removed.contains(path) { continue }
            if case .object(let inner) = value, !isReference(inner), !inner.isEmpty {
                let kept = removing(removed, from: inner, under: path)
                if !kept.isEmpty { result[name] = .object(kept) }
            } else {
                result[name] = value
            }
        }
        return result
    }

    /// The value at a dotted path, nil when absent.
    static func value(at path: String, in fields: Fields) -> JSON? {
        var current: JSON = .object(fields)
        for part in path.split(separator: ".") {
            guard let next = current[String(part)] else { return nil }
            current = next
        }
        return current
    }

    /// The paths both patches touch (one path equal to, or inside, the other) where the two
    /// results disagree: a real conflict. Paths only one side touched, or that both set to the
    /// same value, merge by themselves.
    static func conflicts(mine: Fields, theirs: Fields, base: Fields) -> [String] {
        let myPaths = paths(of: mine)
        let theirPaths = paths(of: theirs)
        let myResult = apply(mine, to: base)
        let theirResult = apply(theirs, to: base)
        return myPaths.filter { path in
            theirPaths.contains { overlaps(path, $0) }
                && value(at: path, in: myResult) != value(at: path, in: theirResult)
        }
    }

    static func overlaps(_ first: String, _ second: String) -> Bool {
        first == second || first.hasPrefix(second + ".") || second.hasPrefix(first + ".")
    }

    /// A stored reference: compared by the object it points to, never patched inside.
    static func isReference(_ fields: Fields) -> Bool { fields["ffUrl"] != nil }

    /// An object's app fields as the SDK compares them: metadata dropped, inlined references
    /// (read with `depthRef`) reduced to their `ffUrl`, as the model writes them back.
    static func appFields(of document: Fields) -> Fields {
        var fields = document
        for name in ObjectMetadata.fields { fields[name] = nil }
        return fields.mapValues(reducingReferences)
    }

    private static func reducingReferences(_ value: JSON) -> JSON {
        switch value {
        case .object(let inner):
            if let url = inner["ffUrl"] { return .object(["ffUrl": url]) }
            return .object(inner.mapValues(reducingReferences))
        case .array(let items): return .array(items.map(reducingReferences))
        default: return value
        }
    }
}
