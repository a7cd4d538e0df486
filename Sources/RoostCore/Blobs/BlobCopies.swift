import RoostJSON
import RoostStore

/// A blob member a new object takes from another object: the bytes are shared by content
/// address, none are copied (hoodyoodoo copies a Celebrity, photo and all, into TopCelebrity).
public struct BlobCopy: Sendable, Equatable {
    /// The member of the new object.
    public let member: String
    /// The object and member the bytes come from.
    public let collection: String
    public let guid: String
    public let sourceMember: String

    public init(member: String, collection: String, guid: String, sourceMember: String) {
        self.member = member
        self.collection = collection
        self.guid = guid
        self.sourceMember = sourceMember
    }
}

extension ObjectService {
    /// The most blob members one create copies: each costs two reads and a claim.
    public static let maximumBlobCopies = 32

    /// Creates an object whose blob members are those of objects the caller may read. A source
    /// the caller may not read answers exactly as reading it would (404), so the copy is no
    /// oracle; a source without that blob answers 404 `not_found` naming the member.
    /// `readers` must be able to read each source too (nil: anonymous): a script with the system's
    /// rights copies for the user who caused it only what that user may read.
    public func create(
        in collection: String, body: JSONObject, copyingBlobs copies: [BlobCopy], caller: Principal?,
        sourcesAlsoReadableBy readers: [Principal?] = []
    ) async throws -> StoredObject {
        guard copies.count <= Self.maximumBlobCopies else {
            throw RoostError.invalidField(
                "ffRefs",
                "An object copies at most \(Self.maximumBlobCopies) blob members, not \(copies.count).")
        }
        var blobs: [String: BlobDescriptor] = [:]
        for copy in copies {
            try BlobService.validate(member: copy.member)
            if body[copy.member] != nil || blobs[copy.member] != nil {
                throw RoostError.invalidField(
                    copy.member,
                    "'\(copy.member)' is given twice: as a field or blob member, and as a blob to copy.")
            }
            for reader in readers { _ = try await sourceBlob(copy, caller: reader) }
            blobs[copy.member] = try await claimedBlob(copy, caller: caller)
        }
        return try await create(in: collection, body: body, blobs: blobs, caller: caller, idempotency: nil)
    }

    /// The source's blob, claimed so that collection keeps its bytes until the new object refers
    /// to them: read, claimed, then read again, since the source may have let go of them (and
    /// collection removed them) between the first read and the claim.
    private func claimedBlob(_ copy: BlobCopy, caller: Principal?) async throws -> BlobDescriptor {
        var seen = try await sourceBlob(copy, caller: caller)
        for _ in 0..<3 {
            try await store.claimBlob(seen.sha256, at: clock.nowMilliseconds())
            let now = try await sourceBlob(copy, caller: caller)
            if now.sha256 == seen.sha256 { return now }
            seen = now
        }
        throw RoostError.conflict(collection: copy.collection, guid: copy.guid)
    }

    private func sourceBlob(_ copy: BlobCopy, caller: Principal?) async throws -> BlobDescriptor {
        let source = try await object(in: copy.collection, guid: copy.guid, caller: caller)
        guard case .object(let fields) = try JSONParser.parse(source.document),
            let blob = BlobDescriptor(fields[copy.sourceMember])
        else {
            throw RoostError.blobNotFound(
                collection: copy.collection, guid: copy.guid, member: copy.sourceMember)
        }
        return blob
    }
}
