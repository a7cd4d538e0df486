import RoostJSON
import RoostQuery
import RoostStore

/// The object store as apps see it: schemaless JSON objects in named collections, with
/// metadata Roost maintains and optimistic concurrency on versions.
public struct ObjectService: Sendable {
    /// Metadata fields, in the order they appear in every object.
    public static let metadataFields = [
        "guid", "ffUrl", "createdBy", "createdAt", "updatedBy", "updatedAt", "version",
    ]
    /// The most objects one page may hold.
    public static let maximumPageSize = 1000

    let store: any ObjectStore
    let clock: any Clock
    let guids: any GuidGenerator

    public init(
        store: any ObjectStore, clock: any Clock = SystemClock(),
        guids: any GuidGenerator = RandomGuidGenerator()
    ) {
        self.store = store
        self.clock = clock
        self.guids = guids
    }

    /// Creates an object. The body may name its own `guid` (so a client can retry a create without
    /// making a duplicate); other metadata fields are refused.
    public func create(in collection: String, body: JSONObject, actor: String?) async throws -> StoredObject {
        try Self.validate(collection: collection)
        var fields = body
        var guid = guids.makeGuid()
        if let requested = fields["guid"] {
            guard let text = requested.stringValue, Self.isValidGuid(text) else {
                throw RoostError.invalidGuid(requested.stringValue ?? JSONWriter.string(requested))
            }
            guid = text
            fields["guid"] = nil
        }
        for field in Self.metadataFields where fields[field] != nil { throw RoostError.readOnlyField(field) }
        let now = clock.nowMilliseconds()
        let object = Self.makeObject(
            collection: collection, guid: guid, fields: fields, createdBy: actor, createdAt: now,
            updatedBy: actor,
            updatedAt: now, version: 1)
        do {
            try await store.insert(object)
        } catch StoreError.duplicate {
            throw RoostError.conflict(collection: collection, guid: guid)
        }
        return object
    }

    /// The object, or 404.
    public func object(in collection: String, guid: String) async throws -> StoredObject {
        try Self.validate(collection: collection)
        guard Self.isValidGuid(guid), let object = try await store.object(in: collection, guid: guid) else {
            throw RoostError.notFound(collection: collection, guid: guid)
        }
        return object
    }

    /// Replaces every field of an object (`PUT`); metadata may be echoed unchanged.
    public func replace(
        in collection: String, guid: String, body: JSONObject, ifMatch: String?, actor: String?
    ) async throws -> StoredObject {
        try await modify(collection: collection, guid: guid, ifMatch: ifMatch, actor: actor) {
            current, metadata in
            var fields = body
            try Self.removeEchoedMetadata(from: &fields, current: metadata)
            return fields
        }
    }

    /// Applies an RFC 7396 merge patch (`PATCH`).
    public func patch(
        in collection: String, guid: String, patch: JSONObject, ifMatch: String?, actor: String?
    ) async throws -> StoredObject {
        try await modify(collection: collection, guid: guid, ifMatch: ifMatch, actor: actor) {
            current, metadata in
            var patch = patch
            try Self.removeEchoedMetadata(from: &patch, current: metadata)
            return MergePatch.apply(patch, to: current)
        }
    }

    /// Deletes an object, honouring `If-Match`.
    public func delete(in collection: String, guid: String, ifMatch: String?) async throws {
        try Self.validate(collection: collection)
        guard Self.isValidGuid(guid) else { throw RoostError.notFound(collection: collection, guid: guid) }
        do {
            try await store.delete(in: collection, guid: guid) { current in
                try Self.check(ifMatch: ifMatch, version: current.version)
            }
        } catch StoreError.notFound {
            throw RoostError.notFound(collection: collection, guid: guid)
        }
    }

    /// A page of a collection; an unknown collection is an empty one.
    public func list(_ request: ListRequest) async throws -> ListPage {
        try Self.validate(collection: request.collection)
        guard (1...Self.maximumPageSize).contains(request.count) else {
            throw RoostError.invalidParameter("count", "count must be between 1 and \(Self.maximumPageSize).")
        }
        guard request.start >= 0 else {
            throw RoostError.invalidParameter("start", "start must be 0 or more.")
        }
        return try await store.list(request)
    }

    /// The documents with referenced objects inlined `depth` levels deep (`?depthRef=N`, 0 to 3).
    public func inliningReferences(_ documents: [[UInt8]], depth: Int) async throws -> [[UInt8]] {
        guard (0...ReferenceResolver.maximumDepth).contains(depth) else {
            throw RoostError.invalidParameter(
                "depthRef", "depthRef must be between 0 and \(ReferenceResolver.maximumDepth).")
        }
        return try await ReferenceResolver(store: store).inline(documents, depth: depth)
    }

    /// The objects of `source` whose `field` refers to the given object (FatFractal's BackReferences).
    public func backReferences(
        to collection: String, guid: String, from source: String, field: FieldPath, _ request: ListRequest
    ) async throws -> ListPage {
        try Self.validate(collection: collection)
        try Self.validate(collection: source)
        guard let reference = FieldPath(components: field.components + ["ffUrl"]) else {
            throw RoostError.invalidParameter(
                "field", "A back-reference field is a dotted path of at most 15 parts.")
        }
        var filtered = request
        filtered.collection = source
        filtered.filter = .comparison(reference, .eq, .string("/ff/resources/\(collection)/\(guid)"))
        return try await list(filtered)
    }

    /// The objects that the `member` references of the matching objects point at, each once, in order
    /// (FatFractal's `/ff/resources/C/(query)/member`).
    public func traverse(query text: String, member: String, _ request: ListRequest) async throws -> ListPage
    {
        var all = request
        all.start = 0
        all.count = Self.maximumPageSize
        all.includeTotal = false
        let sources = try await find(query: text, all)
        var order: [(collection: String, guid: String)] = []
        var seen = Set<String>()
        for document in sources.documents {
            guard case .object(let object) = try JSONParser.parse(document), let value = object[member],
                let target = ReferenceResolver.reference(value),
                seen.insert("\(target.collection)/\(target.guid)").inserted
            else { continue }
            order.append(target)
        }
        var found: [String: [UInt8]] = [:]
        for (collection, guids) in Dictionary(grouping: order, by: \.collection) {
            for (guid, document) in try await store.objects(in: collection, guids: guids.map(\.guid)) {
                found["\(collection)/\(guid)"] = document
            }
        }
        let documents = order.compactMap { found["\($0.collection)/\($0.guid)"] }
        let page = Array(documents.dropFirst(request.start).prefix(request.count))
        return ListPage(documents: page, total: request.includeTotal ? documents.count : nil)
    }

    /// Objects matching a query in FatFractal's language, paged and sorted like ``list(_:)``;
    /// with `guid eq random(guid)`, one matching object picked at random (or none).
    public func find(query text: String, _ request: ListRequest) async throws -> ListPage {
        try Self.validate(collection: request.collection)
        let plan: QueryPlan
        do {
            plan = try QueryPlan(QueryParser.parse(text))
        } catch {
            throw RoostError.invalidQuery(error, query: text)
        }
        var filtered = request
        filtered.filter = plan.filter
        do {
            guard plan.pickRandom else { return try await list(filtered) }
            let document = try await store.randomObject(in: request.collection, matching: plan.filter)
            var total: Int?
            if request.includeTotal {
                filtered.count = 1
                total = try await store.list(filtered).total
            }
            return ListPage(documents: document.map { [$0] } ?? [], total: total)
        } catch let error as QueryError {
            throw RoostError.invalidQuery(error, query: text)
        }
    }

    private func modify(
        collection: String, guid: String, ifMatch: String?, actor: String?,
        _ makeFields: @escaping @Sendable (JSONObject, JSONObject) throws -> JSONObject
    ) async throws -> StoredObject {
        try Self.validate(collection: collection)
        guard Self.isValidGuid(guid) else { throw RoostError.notFound(collection: collection, guid: guid) }
        let now = clock.nowMilliseconds()
        do {
            return try await store.update(in: collection, guid: guid) { current in
                try Self.check(ifMatch: ifMatch, version: current.version)
                let (fields, metadata) = try Self.split(current.document)
                let next = try makeFields(fields, metadata)
                return Self.makeObject(
                    collection: collection, guid: guid, fields: next, createdBy: current.createdBy,
                    createdAt: current.createdAt, updatedBy: actor, updatedAt: max(now, current.updatedAt),
                    version: current.version + 1)
            }
        } catch StoreError.notFound {
            throw RoostError.notFound(collection: collection, guid: guid)
        }
    }

    static func makeObject(
        collection: String, guid: String, fields: JSONObject, createdBy: String?, createdAt: Int64,
        updatedBy: String?,
        updatedAt: Int64, version: Int64
    ) -> StoredObject {
        var members: [(key: String, value: JSONValue)] = [
            ("guid", .string(guid)), ("ffUrl", .string("/ff/resources/\(collection)/\(guid)")),
            ("createdBy", createdBy.map(JSONValue.string) ?? .null), ("createdAt", .integer(createdAt)),
            ("updatedBy", updatedBy.map(JSONValue.string) ?? .null), ("updatedAt", .integer(updatedAt)),
            ("version", .integer(version)),
        ]
        members.append(contentsOf: fields.members)
        let document = JSONWriter.bytes(.object(JSONObject(uniqueMembers: members)))
        return StoredObject(
            collection: collection, guid: guid, document: document, createdBy: createdBy,
            createdAt: createdAt,
            updatedBy: updatedBy, updatedAt: updatedAt, version: version)
    }

    /// Splits a stored document into user fields and metadata.
    static func split(_ document: [UInt8]) throws -> (fields: JSONObject, metadata: JSONObject) {
        guard case .object(let whole) = try JSONParser.parse(document) else { throw RoostError.internalError }
        var fields = JSONObject()
        var metadata = JSONObject()
        for member in whole.members {
            if metadataFields.contains(member.key) {
                metadata[member.key] = member.value
            } else {
                fields[member.key] = member.value
            }
        }
        return (fields, metadata)
    }

    /// Drops metadata a client sent back unchanged; refuses any that differs.
    static func removeEchoedMetadata(from body: inout JSONObject, current: JSONObject) throws {
        for field in metadataFields {
            guard let sent = body[field] else { continue }
            guard sent == current[field] else { throw RoostError.readOnlyField(field) }
            body[field] = nil
        }
    }

    /// Checks `If-Match` (a list of `"version"` tags, or `*`) against the current version.
    static func check(ifMatch: String?, version: Int64) throws {
        guard let ifMatch, !versionMatches(ifMatch, version: version) else { return }
        throw RoostError.versionMismatch(expected: ifMatch, current: version)
    }

    /// Whether an `If-Match`/`If-None-Match` list (`"3"`, `W/"3"`, `3`, `*`, comma-separated) names
    /// this version. The one parser of entity tags, for reads and writes alike.
    public static func versionMatches(_ tags: String, version: Int64) -> Bool {
        tags.split(separator: ",").contains { tag in
            var bare = Substring(String(tag).trimmed(of: " \t"))
            if bare == "*" { return true }
            if bare.hasPrefix("W/") { bare = bare.dropFirst(2) }
            if bare.hasPrefix("\"") && bare.hasSuffix("\"") && bare.count >= 2 {
                bare = bare.dropFirst().dropLast()
            }
            return bare == String(version)
        }
    }

    /// Whether a collection name is acceptable: `[A-Za-z][A-Za-z0-9_]{0,63}`.
    public static func isValidCollection(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        guard let first = bytes.first, bytes.count <= 64 else { return false }
        let isLetter = { (byte: UInt8) in (byte >= 65 && byte <= 90) || (byte >= 97 && byte <= 122) }
        return isLetter(first) && bytes.allSatisfy { isLetter($0) || ($0 >= 48 && $0 <= 57) || $0 == 95 }
    }

    /// Whether a guid is acceptable: `[A-Za-z0-9_-]{1,64}`.
    public static func isValidGuid(_ guid: String) -> Bool {
        let bytes = Array(guid.utf8)
        guard !bytes.isEmpty, bytes.count <= 64 else { return false }
        return bytes.allSatisfy {
            ($0 >= 65 && $0 <= 90) || ($0 >= 97 && $0 <= 122) || ($0 >= 48 && $0 <= 57) || $0 == 95
                || $0 == 45
        }
    }

    static func validate(collection: String) throws {
        guard isValidCollection(collection) else { throw RoostError.invalidCollection(collection) }
    }
}

extension String {
    func trimmed(of set: String) -> String {
        var result = Substring(self)
        while let first = result.first, set.contains(first) { result.removeFirst() }
        while let last = result.last, set.contains(last) { result.removeLast() }
        return String(result)
    }
}

/// JSON Merge Patch, RFC 7396.
public enum MergePatch {
    /// `patch` applied to `target`: `null` removes a member, objects merge, anything else replaces.
    public static func apply(_ patch: JSONObject, to target: JSONObject) -> JSONObject {
        var result = target
        for member in patch.members {
            switch member.value {
            case .null:
                result[member.key] = nil
            case .object(let nested):
                let base = result[member.key]?.objectValue ?? JSONObject()
                result[member.key] = .object(apply(nested, to: base))
            default:
                result[member.key] = member.value
            }
        }
        return result
    }
}
