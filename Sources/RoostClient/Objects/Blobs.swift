import Foundation

extension Roost {
    /// Stores bytes as the object's blob member `member` (an image, a file): a new version of the
    /// object, whose member then describes the blob. With ``OfflinePolicy/queueWhenOffline`` the
    /// upload waits in the queue like other writes (the bytes are kept beside the queue file).
    public func upload<Model: RoostModel>(
        _ data: Data, contentType: String? = nil, to member: String, of object: Stored<Model>,
        policy: OfflinePolicy = .failWhenOffline
    ) async throws -> WriteOutcome<Model> {
        var operation = makeOperation(
            .upload, Model.collection, object.guid, expectedVersion: nil, body: data)
        operation.member = member
        operation.contentType = contentType ?? "application/octet-stream"
        return try await blobOutcome(try await write(operation, policy: policy))
    }

    /// Uploads a file as the object's blob member, streamed from disk (memory stays bounded
    /// whatever the file's size), calling `progress` as bytes go out. Queued offline, the file is
    /// first copied beside the queue, so the app may delete or change its own copy.
    public func upload<Model: RoostModel>(
        file: URL, contentType: String? = nil, to member: String, of object: Stored<Model>,
        policy: OfflinePolicy = .failWhenOffline, progress: ProgressHandler? = nil
    ) async throws -> WriteOutcome<Model> {
        var operation = makeOperation(.upload, Model.collection, object.guid, expectedVersion: nil, body: nil)
        operation.member = member
        operation.contentType = contentType ?? "application/octet-stream"
        switch policy {
        case .failWhenOffline:
            var request = operation.request(body: nil)
            request.headers["Content-Type"] = operation.contentType
            let response = try await perform(request, transfer: .upload(file, progress))
            remember(response, of: operation)
            return .delivered(try Wire.decode(Stored<Model>.self, from: response.body))
        case .queueWhenOffline:
            let stored: QueuedOperation
            do {
                stored = try log.add(operation, copying: file)
            } catch {
                throw RoostError.storageFailed("copy \(file.lastPathComponent) into the offline queue", error)
            }
            if let progress { delivery.progress[stored.id] = progress }
            defer { delivery.progress[stored.id] = nil }
            return try await blobOutcome(try await enqueue(stored))
        }
    }

    private func blobOutcome<Model: RoostModel>(_ result: WriteResult) async throws -> WriteOutcome<Model> {
        switch result {
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

    /// Downloads a blob member into a file, streamed to disk by URLSession (memory stays bounded
    /// whatever its size; the disk cache is not used), replacing the file, and returns its URL.
    public func download<Model: RoostModel>(
        member: String, of object: Stored<Model>, to file: URL, progress: ProgressHandler? = nil
    ) async throws -> URL {
        let request = TransportRequest(
            method: "GET", path: Self.blobPath(Model.collection, object.guid, member))
        _ = try await perform(request, transfer: .download(file, progress))
        return file
    }

    /// Removes the object's blob member (a new version of the object, without the member).
    public func deleteBlob<Model: RoostModel>(member: String, of object: Stored<Model>) async throws {
        let path = Self.blobPath(Model.collection, object.guid, member)
        _ = try await perform(TransportRequest(method: "DELETE", path: path))
        cache.remove(path)
        cache.remove(Self.objectPath(Model.collection, object.guid))
    }

    static func blobPath(_ collection: String, _ guid: String, _ member: String) -> String {
        objectPath(collection, guid) + "/" + pathSegment(member)
    }
}
