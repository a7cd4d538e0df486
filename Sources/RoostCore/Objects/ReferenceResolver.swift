import RoostJSON
import RoostStore

/// Inlines referenced objects (`{"ffUrl": "/ff/resources/C/G"}`) up to a depth, for `?depthRef=N`.
///
/// References are fetched level by level, one query per collection and level, so a page of 100
/// posts that each point at their author costs one extra query, not a hundred. A reference back
/// to an object that encloses it is left as a reference, which stops cycles. A reference to an
/// object the caller may not read stays a reference, and owner-only fields are stripped.
struct ReferenceResolver {
    static let maximumDepth = 3
    let store: any ObjectStore
    let access: Access

    /// The documents with their references inlined to `depth` levels.
    func inline(_ documents: [[UInt8]], depth: Int) async throws -> [[UInt8]] {
        guard depth > 0, !documents.isEmpty else { return documents }
        let roots = try documents.map { try JSONParser.parse($0) }
        var fetched: [String: JSONValue] = [:]
        var frontier = roots
        for _ in 0..<depth {
            var wanted: [String: Set<String>] = [:]
            for value in frontier { Self.collectReferences(in: value, into: &wanted) }
            for (collection, guids) in wanted {
                for guid in guids where fetched["\(collection)/\(guid)"] != nil {
                    wanted[collection]?.remove(guid)
                }
            }
            wanted = wanted.filter { !$0.value.isEmpty }
            if wanted.isEmpty { break }
            frontier = []
            for (collection, guids) in wanted {
                let documents = try await store.objects(
                    in: collection, guids: Array(guids), restriction: access.listRestriction(collection))
                for (guid, document) in documents {
                    let value = try JSONParser.parse(try access.visibleDocument(document, in: collection))
                    fetched["\(collection)/\(guid)"] = value
                    frontier.append(value)
                }
            }
        }
        return roots.map { root in
            JSONWriter.bytes(
                Self.replace(
                    in: root, with: fetched, depth: depth,
                    ancestors: Self.identity(of: root).map { [$0] } ?? []))
        }
    }

    /// `Collection/guid` of a reference object, or nil when the value is not a reference.
    static func reference(_ value: JSONValue) -> (collection: String, guid: String)? {
        guard case .object(let object) = value, object.members.count == 1,
            let url = object["ffUrl"]?.stringValue
        else {
            return nil
        }
        return parse(url)
    }

    private static func parse(_ url: String) -> (collection: String, guid: String)? {
        let parts = url.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 5, parts[0].isEmpty, parts[1] == "ff", parts[2] == "resources",
            ObjectService.isValidCollection(String(parts[3])), ObjectService.isValidGuid(String(parts[4]))
        else { return nil }
        return (String(parts[3]), String(parts[4]))
    }

    private static func identity(of value: JSONValue) -> String? {
        guard case .object(let object) = value, let url = object["ffUrl"]?.stringValue,
            let (collection, guid) = parse(url)
        else {
            return nil
        }
        return "\(collection)/\(guid)"
    }

    private static func collectReferences(in value: JSONValue, into wanted: inout [String: Set<String>]) {
        if let (collection, guid) = reference(value) {
            wanted[collection, default: []].insert(guid)
            return
        }
        switch value {
        case .object(let object):
            for member in object.members { collectReferences(in: member.value, into: &wanted) }
        case .array(let elements): for element in elements { collectReferences(in: element, into: &wanted) }
        default: break
        }
    }

    private static func replace(
        in value: JSONValue, with fetched: [String: JSONValue], depth: Int, ancestors: [String]
    ) -> JSONValue {
        if let (collection, guid) = reference(value) {
            let key = "\(collection)/\(guid)"
            guard depth > 0, !ancestors.contains(key), let target = fetched[key] else { return value }
            return replace(in: target, with: fetched, depth: depth - 1, ancestors: ancestors + [key])
        }
        switch value {
        case .object(let object):
            return .object(
                JSONObject(
                    uniqueMembers: object.members.map {
                        ($0.key, replace(in: $0.value, with: fetched, depth: depth, ancestors: ancestors))
                    }))
        case .array(let elements):
            return .array(elements.map { replace(in: $0, with: fetched, depth: depth, ancestors: ancestors) })
        default:
            return value
        }
    }
}
