import Foundation

extension Roost {
    /// Stores bytes as the object's blob member `member` (an image, a file): a new version of the
    /// object, whose member then describes the blob. With ``OfflinePolicy/queueWhenOffline`` the
    /// upload waits in the queue like other writes (the bytes are kept in the queue file).
    public func upload<Model: RoostModel>(
        _ data: Data, contentType: String? = nil, to member: String, of object: Stored<Model>,
        policy: OfflinePolicy = .failWhenOffline
    ) async throws -> WriteOutcome<Model> {
        var operation = makeOperation(
            .upload, Model.collection, object.guid, expectedVersion: nil, body: data)
        operation.member = member
        operation.contentType = contentType ?? "application/octet-stream"
        switch try await write(operation, policy: policy) {
        case .delivered(let response):
            return .delivered(try Wire.decode(Stored<Model>.self, from: response.body))
        case .queued(let operation): return .queued(operation)
        }
    }

    /// The bytes of the object's blob member, through the disk cache (its ETag is the bytes'
    /// SHA-256, so an unchanged blob costs a 304).
    public func download<Model: RoostModel>(
        member: String, of object: Stored<Model>, cachePolicy: CachePolicy? = nil
    ) async throws -> Data {
        try await get(Self.blobPath(Model.collection, object.guid, member), cachePolicy: cachePolicy)
    }

    /// Downloads a blob member into a file (replacing it atomically) and returns its URL.
    public func download<Model: RoostModel>(
        member: String, of object: Stored<Model>, to file: URL, cachePolicy: CachePolicy? = nil
    ) async throws -> URL {
        let data = try await download(member: member, of: object, cachePolicy: cachePolicy)
        do {
            try data.write(to: file, options: .atomic)
        } catch {
            throw RoostError.storageFailed("write \(file.path)", error)
        }
        return file
    }

    static func blobPath(_ collection: String, _ guid: String, _ member: String) -> String {
        objectPath(collection, guid) + "/" + pathSegment(member)
    }
}
