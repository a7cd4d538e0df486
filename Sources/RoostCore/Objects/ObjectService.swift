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
    let clock: any WallClock
    let guids: any GuidGenerator
    /// The app definition whose rules every operation checks.
    public let definitions: AppDefinitionSource
    let writeLocks = ObjectWriteLocks()
    /// The app's PRE and POST handlers; nil runs none (see ``withoutHooks()``).
    public var hooks: (any ObjectWriteHooks)?
    /// The request this service writes for (see ``serving(_:)``).
    public internal(set) var origin: WriteOrigin?

    public init(
        store: any ObjectStore, clock: any WallClock = SystemWallClock(),
        guids: any GuidGenerator = RandomGuidGenerator(),
        definitions: AppDefinitionSource = AppDefinitionSource()
    ) {
        self.store = store
        self.clock = clock
        self.guids = guids
        self.definitions = definitions
    }

    /// The caller's rights under the definition in force now.
    func access(_ caller: Principal?) -> Access {
        Access(caller: caller, definition: definitions.definition)
    }

    /// Fields a client never writes through the JSON API: metadata, and the access list, which
    /// has its own resource.
    static let reservedFields = metadataFields + ["ffACL"]

    /// Refuses a create that can be refused before its body is read (see `Access`); passing it
    /// promises nothing, the create checks everything again.
    public func checkCreateBeforeBody(in collection: String, caller: Principal?) throws {
        try access(caller).checkCreateBeforeBody(in: collection)
    }

    /// Creates an object. The body may name its own `guid` (so a client can retry a create without
    /// making a duplicate); other metadata fields are refused. `createdBy` is always the caller.
    /// `idempotency`, the request's key, is marked as run in the write's own transaction.
    public func create(
        in collection: String, body: JSONObject, caller: Principal?, idempotency: IdempotencyMark? = nil
    ) async throws -> StoredObject {
        try await create(in: collection, body: body, blobs: [:], caller: caller, idempotency: idempotency)
    }

    /// ``create(in:body:caller:idempotency:)`` with blob members whose bytes are stored already
    /// (see ``create(in:body:copyingBlobs:caller:)``); each gets the new object's own URL.
    func create(
        in collection: String, body: JSONObject, blobs: [String: BlobDescriptor], caller: Principal?,
        idempotency: IdempotencyMark?
    ) async throws -> StoredObject {
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
        for field in Self.reservedFields where fields[field] != nil { throw RoostError.readOnlyField(field) }
        for member in fields.members where BlobDescriptor.isDescriptor(member.value) {
            throw RoostError.readOnlyField(member.key)
        }
        for (member, blob) in blobs {
            fields[member] =
                BlobDescriptor(
                    contentType: blob.contentType, size: blob.size, sha256: blob.sha256,
                    url: "/ff/resources/\(collection)/\(guid)/\(member)"
                ).json
        }
        let now = clock.nowMilliseconds()
        let actor = caller?.userGuid
        let checked = Self.makeObject(
            collection: collection, guid: guid, fields: fields, createdBy: actor, createdAt: now,
            updatedBy: actor,
            updatedAt: now, version: 1)
        try access(caller).checkCreate(checked, body: body)
        let object = try await applyingPreHandlers(.create, to: checked, caller: caller)
        do {
            try await store.insert(object, marking: idempotency)
        } catch StoreError.duplicate {
            if collection == AppDefinition.groupCollection,
                try await store.object(in: collection, guid: guid) == nil
            {
                throw RoostError.groupGuidRetired(guid)
            }
            throw try await duplicateRefusal(collection: collection, guid: guid, caller: caller)
        }
        await runPostHandlers(.create, object, caller: caller)
        return object
    }

    /// The object as the caller may see it; 404 when it does not exist or the caller may not read it.
    public func object(in collection: String, guid: String, caller: Principal?) async throws -> StoredObject {
        try Self.validate(collection: collection)
        guard Self.isValidGuid(guid), var object = try await store.object(in: collection, guid: guid) else {
            throw RoostError.notFound(collection: collection, guid: guid)
        }
        let access = access(caller)
        try access.checkRead(object)
        object.document = try access.visibleDocument(object.document, in: collection)
        return object
    }

    /// Replaces every field of an object (`PUT`); metadata may be echoed unchanged.
    public func replace(
        in collection: String, guid: String, body: JSONObject, ifMatch: String?, caller: Principal?,
        idempotency: IdempotencyMark? = nil
    ) async throws -> StoredObject {
        try await modify(
            collection: collection, guid: guid, ifMatch: ifMatch, body: body, caller: caller,
            idempotency: idempotency
        ) {
            current, metadata in
            var fields = body
            try Self.removeEchoedMetadata(from: &fields, current: metadata)
            try Self.keepBlobs(in: &fields, current: current, replacing: true)
            return fields
        }
    }

    /// Applies an RFC 7396 merge patch (`PATCH`).
    public func patch(
        in collection: String, guid: String, patch: JSONObject, ifMatch: String?, caller: Principal?,
        idempotency: IdempotencyMark? = nil
    ) async throws -> StoredObject {
        try await modify(
            collection: collection, guid: guid, ifMatch: ifMatch, body: patch, caller: caller,
            idempotency: idempotency
        ) {
            current, metadata in
            var patch = patch
            try Self.removeEchoedMetadata(from: &patch, current: metadata)
            try Self.keepBlobs(in: &patch, current: current, replacing: false)
            return MergePatch.apply(patch, to: current)
        }
    }

    /// Deletes an object, honouring `If-Match` and the delete rule.
    public func delete(
        in collection: String, guid: String, ifMatch: String?, caller: Principal?,
        idempotency: IdempotencyMark? = nil
    ) async throws {
        try Self.validate(collection: collection)
        guard Self.isValidGuid(guid) else { throw RoostError.notFound(collection: collection, guid: guid) }
        let access = access(caller)
        let deleted = try await retryingLostRaces(collection: collection, guid: guid) {
            let current = try await current(in: collection, guid: guid)
            try access.checkWrite(.delete, current, body: nil)
            try Self.check(ifMatch: ifMatch, version: current.version)
            _ = try await applyingPreHandlers(.delete, to: current, caller: caller)
            try await store.delete(
                in: collection, guid: guid, expectedVersion: current.version, marking: idempotency,
                by: caller?.userGuid)
            return current
        }
        await runPostHandlers(.delete, deleted, caller: caller)
    }

    /// How many times a write is rebuilt when other writes keep changing its object first.
    static let writeAttempts = 8

    /// Changes an object: reads it, checks rules and `If-Match` and builds the next version
    /// outside the store's writer, then commits only if nobody changed the object meanwhile
    /// (else reads it again and starts over, so rules and `If-Match` always judge what is
    /// replaced). `beforeWriting` runs once, after the first checks pass and before the first write.
    func modify(
        collection: String, guid: String, ifMatch: String?, body: JSONObject?, caller: Principal?,
        idempotency: IdempotencyMark? = nil,
        _ makeFields: @escaping @Sendable (JSONObject, JSONObject) throws -> JSONObject,
        changingACL newACL: (@Sendable (StoredObject) throws -> [UInt8]?)? = nil,
        beforeWriting: (@Sendable () async throws -> Void)? = nil
    ) async throws -> StoredObject {
        try Self.validate(collection: collection)
        guard Self.isValidGuid(guid) else { throw RoostError.notFound(collection: collection, guid: guid) }
        if body?["ffACL"] != nil { throw RoostError.readOnlyField("ffACL") }
        let now = clock.nowMilliseconds()
        let access = access(caller)
        var prepared = false
        let written = try await retryingLostRaces(collection: collection, guid: guid) {
            let current = try await current(in: collection, guid: guid)
            try access.checkWrite(.update, current, body: body)
            try Self.check(ifMatch: ifMatch, version: current.version)
            let (fields, metadata) = try Self.split(current.document)
            let next = try makeFields(fields, metadata)
            if collection == AccountService.userCollection {
                try UserFields.checkChange(from: fields, to: next, by: access)
            }
            var object = Self.makeObject(
                collection: collection, guid: guid, fields: next, createdBy: current.createdBy,
                createdAt: current.createdAt, updatedBy: caller?.userGuid,
                updatedAt: max(now, current.updatedAt), version: current.version + 1)
            object.acl = current.acl
            if let newACL {
                object.acl = try newACL(current)
            } else {
                object = try await applyingPreHandlers(.update, to: object, previous: current, caller: caller)
            }
            if !prepared, let beforeWriting {
                try await beforeWriting()
                prepared = true
            }
            try await store.update(object, expectedVersion: current.version, marking: idempotency)
            return (object: object, replaced: current)
        }
        var object = written.object
        if newACL == nil {
            await runPostHandlers(.update, object, previous: written.replaced, caller: caller)
        }
        object.document = try access.visibleDocument(object.document, in: collection)
        return object
    }

    /// The object as stored now; 404 when there is none.
    private func current(in collection: String, guid: String) async throws -> StoredObject {
        guard let current = try await store.object(in: collection, guid: guid) else {
            throw RoostError.notFound(collection: collection, guid: guid)
        }
        return current
    }

    /// Runs an optimistic write, one at a time per object in this process, and again while a
    /// write from elsewhere commits first.
    private func retryingLostRaces<T>(
        collection: String, guid: String, _ attempt: () async throws -> T
    ) async throws -> T {
        try await writeLocks.withLock("\(collection)/\(guid)") {
            for _ in 0..<Self.writeAttempts {
                do {
                    return try await attempt()
                } catch StoreError.versionChanged {
                    continue
                } catch StoreError.notFound {
                    throw RoostError.notFound(collection: collection, guid: guid)
                }
            }
            throw RoostError.writeContention(collection: collection, guid: guid, attempts: Self.writeAttempts)
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
        var fields: [(key: String, value: JSONValue)] = []
        var metadata: [(key: String, value: JSONValue)] = []
        fields.reserveCapacity(whole.count)
        for member in whole.members {
            if metadataFields.contains(member.key) {
                metadata.append(member)
            } else {
                fields.append(member)
            }
        }
        return (JSONObject(uniqueMembers: fields), JSONObject(uniqueMembers: metadata))
    }

    /// Blob members change only through their own endpoint: a body may echo one unchanged, and a
    /// replacement that leaves one out keeps it.
    static func keepBlobs(in body: inout JSONObject, current: JSONObject, replacing: Bool) throws {
        var echoes: Set<String> = []
        for member in body.members
        where BlobDescriptor.isDescriptor(member.value) || BlobDescriptor.isDescriptor(current[member.key]) {
            // An echo may come back with its keys in another order.
            guard let sent = BlobDescriptor(member.value), sent == BlobDescriptor(current[member.key]) else {
                throw RoostError.readOnlyField(member.key)
            }
            if replacing { body[member.key] = current[member.key] } else { echoes.insert(member.key) }
        }
        guard replacing else {
            if !echoes.isEmpty { body.removeAll { key, _ in echoes.contains(key) } }
            return
        }
        for member in current.members
        where BlobDescriptor.isDescriptor(member.value) && body[member.key] == nil {
            body[member.key] = member.value
        }
    }

    /// Drops metadata a client sent back unchanged; refuses any that differs.
    static func removeEchoedMetadata(from body: inout JSONObject, current: JSONObject) throws {
        var echoed = false
        for field in metadataFields {
            guard let sent = body[field] else { continue }
            guard sent == current[field] else { throw RoostError.readOnlyField(field) }
            echoed = true
        }
        // One pass, however many fields came back.
        if echoed { body.removeAll { key, _ in metadataFields.contains(key) } }
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

extension RoostError {
    /// Other writes kept changing the object between this write's read and its commit.
    static func writeContention(collection: String, guid: String, attempts: Int) -> RoostError {
        RoostError(
            status: 503, code: .writeContention,
            message:
                "Object '\(guid)' in '\(collection)' changed \(attempts) times while this write was being prepared; send it again.",
            details: details(["collection": .string(collection), "guid": .string(guid)]))
    }
}
