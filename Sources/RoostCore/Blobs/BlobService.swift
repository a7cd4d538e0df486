import Foundation
import RoostJSON
import RoostStore

/// An upload streamed to a temporary file of the blob storage, with what was computed on the way.
public struct BlobUpload: Sendable {
    public let path: String
    public let size: Int
    public let digest: [UInt8]
    /// The first bytes, for detecting the type.
    public let prefix: [UInt8]

    public init(path: String, size: Int, digest: [UInt8], prefix: [UInt8]) {
        self.path = path
        self.size = size
        self.digest = digest
        self.prefix = prefix
    }
}

/// A blob to send: its descriptor and the open file.
public struct BlobReading: Sendable {
    public let descriptor: BlobDescriptor
    /// An open file descriptor the caller owns.
    public let file: Int32
    public let size: Int
}

/// Binary members of objects (`/ff/resources/{Collection}/{guid}/{member}`): bytes kept out of
/// the JSON in content-addressed storage, under the object's rules (read to read, update to write).
public struct BlobService: Sendable {
    let objects: ObjectService
    /// The storage the bytes live in.
    public let storage: any BlobStorage
    private let io: BackgroundWorkers

    public init(objects: ObjectService, storage: any BlobStorage, io: BackgroundWorkers) {
        self.objects = objects
        self.storage = storage
        self.io = io
    }

    /// The same service, writing for this request (see ``ObjectService/serving(_:)``).
    public func serving(_ origin: WriteOrigin) -> BlobService {
        BlobService(objects: objects.serving(origin), storage: storage, io: io)
    }

    /// Makes an upload the object's member `member`: a new version of the object, whose member
    /// describes the blob. The temporary file is moved in or removed, whatever happens.
    public func put(
        in collection: String, guid: String, member: String, upload: BlobUpload, contentType: String?,
        ifMatch: String?, caller: Principal?, idempotency: IdempotencyMark? = nil
    ) async throws -> StoredObject {
        do {
            try Self.validate(member: member)
            let type = try BlobContent.contentType(declared: contentType, prefix: upload.prefix)
            let sha256 = Sodium.hex(upload.digest)
            let path = upload.path
            // On disk before the object refers to it; flushed off the event loops.
            let flushed = await io.run {
                let descriptor = open(path, O_RDONLY | O_CLOEXEC)
                defer { if descriptor >= 0 { close(descriptor) } }
                return descriptor >= 0 && fsync(descriptor) == 0
            }
            guard flushed else { throw RoostError.internalError }
            let descriptor = BlobDescriptor(
                contentType: type, size: upload.size, sha256: sha256,
                url: "/ff/resources/\(collection)/\(guid)/\(member)")
            return try await objects.modify(
                collection: collection, guid: guid, ifMatch: ifMatch, body: nil, caller: caller,
                idempotency: idempotency,
                { fields, _ in
                    var fields = fields
                    fields[member] = descriptor.json
                    return fields
                },
                beforeWriting: { try await place(upload: path, sha256: sha256) })
        } catch {
            unlink(upload.path)
            throw error
        }
    }

    /// Moves an upload's file into place once the write that will refer to it is allowed, off the
    /// writer and off the loops: the file is visible only once complete and flushed, and a crash
    /// before the write commits leaves an unreferenced file that collection removes.
    private func place(upload path: String, sha256: String) async throws {
        let storage = self.storage
        // Bytes stored already are reused: claimed first, so that collection keeps them until the
        // write refers to them. Should collection remove them before the claim, adopting moves
        // the upload's own file in.
        if try await io.run({ Result { try storage.modified(sha256) } }).get() != nil {
            try await objects.store.claimBlob(sha256, at: Int64(Date().timeIntervalSince1970 * 1000))
        }
        try await io.run { Result { try storage.adopt(temporaryFile: path, sha256: sha256) } }.get()
    }

    /// Refuses an upload the caller could not complete (a bad member name, no such object, no
    /// right to update it, a stale `If-Match`), so that the server can answer when the upload's
    /// head arrives, before a byte is stored. ``put`` checks again inside its write.
    public func checkUpload(
        in collection: String, guid: String, member: String, ifMatch: String?, caller: Principal?
    ) async throws {
        try Self.validate(member: member)
        try ObjectService.validate(collection: collection)
        guard ObjectService.isValidGuid(guid),
            let current = try await objects.store.object(in: collection, guid: guid)
        else { throw RoostError.notFound(collection: collection, guid: guid) }
        try objects.access(caller).checkWrite(.update, current, body: nil)
        try ObjectService.check(ifMatch: ifMatch, version: current.version)
    }

    /// The blob, opened for sending, if the caller may read its object.
    public func blob(in collection: String, guid: String, member: String, caller: Principal?) async throws
        -> BlobReading
    {
        let object = try await objects.object(in: collection, guid: guid, caller: caller)
        guard case .object(let fields) = try JSONParser.parse(object.document),
            let descriptor = BlobDescriptor(fields[member])
        else { throw RoostError.blobNotFound(collection: collection, guid: guid, member: member) }
        // Off the cooperative threads: a remote store may fetch the blob into its cache first.
        let storage = self.storage
        let sha256 = descriptor.sha256
        guard let (file, size) = try await io.run({ Result { try storage.open(sha256) } }).get() else {
            throw RoostError.internalError
        }
        return BlobReading(descriptor: descriptor, file: file, size: size)
    }

    /// Removes the member; the bytes go at the next `roost blobs gc` if nothing else refers to them.
    public func delete(
        in collection: String, guid: String, member: String, ifMatch: String?, caller: Principal?,
        idempotency: IdempotencyMark? = nil
    ) async throws -> StoredObject {
        try await objects.modify(
            collection: collection, guid: guid, ifMatch: ifMatch, body: nil, caller: caller,
            idempotency: idempotency
        ) {
            fields, _ in
            guard BlobDescriptor.isDescriptor(fields[member]) else {
                throw RoostError.blobNotFound(collection: collection, guid: guid, member: member)
            }
            var fields = fields
            fields[member] = nil
            return fields
        }
    }

    static func validate(member: String) throws {
        let bytes = Array(member.utf8)
        guard let first = bytes.first, bytes.count <= 64,
            (65...90).contains(first) || (97...122).contains(first) || first == 95,
            bytes.allSatisfy({
                (65...90).contains($0) || (97...122).contains($0) || (48...57).contains($0) || $0 == 95
            }),
            !ObjectService.reservedFields.contains(member)
        else {
            throw RoostError.invalidField(
                member,
                "A blob member is named like a field: a letter or '_', then letters, digits or '_' (at most 64), and not a metadata name."
            )
        }
    }
}

extension RoostError {
    static func blobNotFound(collection: String, guid: String, member: String) -> RoostError {
        RoostError(
            status: 404, code: .notFound,
            message:
                "Object '\(guid)' in '\(collection)' has no blob '\(member)'; PUT the bytes there first.",
            details: details([
                "collection": .string(collection), "guid": .string(guid), "member": .string(member),
            ]))
    }
}
