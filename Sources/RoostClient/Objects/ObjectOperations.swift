import Foundation

extension Roost {
    // MARK: Reads

    /// The object with this guid. `depthRef` inlines referenced objects (see ``Ref/object``).
    public func fetch<Model: RoostModel>(
        _ type: Model.Type, guid: String, depthRef: Int = 0, cachePolicy: CachePolicy? = nil
    ) async throws -> Stored<Model> {
        var path = Self.objectPath(Model.collection, guid)
        if depthRef > 0 { path += "?depthRef=\(depthRef)" }
        let pending = pendingWrites(in: Model.collection, guid: guid)
        var document: [String: JSON]?
        var origin = ReadOrigin.device
        do {
            let answer = try await read(path, cachePolicy: cachePolicy)
            document = try Self.objectDocument(answer.body, Model.collection, guid)
            origin = answer.origin
        } catch let error as RoostError {
            if !error.isFromServer, cachePolicy != .networkOnly,
                let listed = cachedDocuments(in: Model.collection)[guid]
            {
                // Offline and never read on its own, but seen in a cached list.
                document = listed
                origin = .cache
            } else if pending.isEmpty || !(error.status == 404 || !error.isFromServer)
                || !pending.contains(where: { $0.kind == .create })
            {
                // Only a queued create answers for an object the server (or the cache) lacks.
                throw error
            }
        }
        guard let shown = pending.isEmpty ? document : overlaid(document, pending) else {
            throw RoostError(
                status: 404, code: .notFound,
                message:
                    "\(Model.collection) \(guid) is deleted on this device; the delete waits in the offline queue."
            )
        }
        var stored = try Self.decodeObject(shown, as: Model.self)
        stored.hasPendingWrites = !pending.isEmpty
        stored.origin = origin
        return stored
    }

    static func objectDocument(_ body: Data, _ collection: String, _ guid: String) throws -> [String: JSON] {
        guard let document = try? JSONDecoder().decode([String: JSON].self, from: body) else {
            throw RoostError(
                status: nil, code: RoostError.Code.decodingFailed,
                message: "The server's answer for \(collection) \(guid) is not a JSON object.")
        }
        return document
    }

    /// The object a reference points to.
    public func fetch<Model: RoostModel>(_ ref: Ref<Model>, cachePolicy: CachePolicy? = nil) async throws
        -> Stored<Model>
    {
        try await fetch(Model.self, guid: ref.guid, cachePolicy: cachePolicy)
    }

    /// Every object of a collection, in pages of `count` from `start`.
    public func list<Model: RoostModel>(
        _ type: Model.Type, start: Int = 0, count: Int = 100, cachePolicy: CachePolicy? = nil
    ) async throws -> [Stored<Model>] {
        try await query(type).page(start: start, count: count, cachePolicy: cachePolicy)
    }

    /// A GET through the disk cache, by the given policy.
    func get(_ path: String, cachePolicy: CachePolicy?) async throws -> Data {
        try await read(path, cachePolicy: cachePolicy).body
    }

    /// A GET through the disk cache, by the given policy, and where the answer came from.
    func read(_ path: String, cachePolicy: CachePolicy?) async throws -> (body: Data, origin: ReadOrigin) {
        let request = TransportRequest(method: "GET", path: path)
        let policy = cachePolicy ?? configuration.defaultCachePolicy
        if case .networkOnly = policy { return (try await perform(request).body, .server) }
        let cached = cache.entry(for: path)
        if case .cacheElseNetwork = policy, let cached { return (cached.body, .cache) }
        var revalidating = request
        if let etag = cached?.etag { revalidating.headers["If-None-Match"] = etag }
        do {
            let response = try await perform(revalidating)
            if response.status == 304, let cached { return (cached.body, .server) }
            cache.store(ResponseCache.Entry(etag: response.header("ETag"), body: response.body), for: path)
            return (response.body, .server)
        } catch let error as RoostError {
            if error.status == 404 { cache.remove(path) }
            guard !error.isFromServer, let cached else { throw error }
            return (cached.body, .cache)
        }
    }

    // MARK: Writes

    /// Creates an object; `guid` may be chosen by the app (a random one is made otherwise).
    public func create<Model: RoostModel>(_ value: Model, guid: String? = nil) async throws -> Stored<Model> {
        try await create(value, guid: guid, policy: .failWhenOffline).stored!
    }

    /// Creates an object, or queues the create when the server cannot be reached. The guid is
    /// chosen here, so ``WriteOutcome/guid`` can be referenced at once.
    public func create<Model: RoostModel>(_ value: Model, guid: String? = nil, policy: OfflinePolicy)
        async throws -> WriteOutcome<Model>
    {
        let guid = guid ?? UUID().uuidString.lowercased()
        let operation = makeOperation(
            .create, Model.collection, guid, expectedVersion: nil, body: try Self.body(of: value, guid: guid))
        return try await outcome(of: operation, policy: policy)
    }

    /// Sends the fields changed since `stored` was read, as a merge patch (`PATCH`) guarded by
    /// the version read (`If-Match`): a 412 `version_mismatch` if someone changed it since. Fields
    /// the model does not know are never touched. An object the app built itself (not read) is
    /// replaced whole (`PUT`).
    public func update<Model: RoostModel>(_ stored: Stored<Model>) async throws -> Stored<Model> {
        try await update(stored, policy: .failWhenOffline).stored!
    }

    /// ``update(_:)``, queued when the server cannot be reached. A queued update that meets a
    /// change made elsewhere is rebased field by field when it is sent: changes to different
    /// fields are both kept; the same field goes to ``RoostConfiguration/conflictPolicy``, and
    /// ``QueueEvent/conflict(_:_:)`` reports the outcome.
    public func update<Model: RoostModel>(_ stored: Stored<Model>, policy: OfflinePolicy) async throws
        -> WriteOutcome<Model>
    {
        let mine = try Self.fields(of: stored.value)
        guard let original = stored.original else {
            let operation = makeOperation(
                .replace, Model.collection, stored.guid, expectedVersion: stored.metadata.version,
                body: try Wire.encoder.encode(JSON.object(mine)))
            return try await outcome(of: operation, policy: policy)
        }
        let base = try Self.fields(of: original)
        let patch = MergePatch.diff(from: base, to: mine)
        if patch.isEmpty { return .delivered(stored) }
        var operation = makeOperation(
            .patch, Model.collection, stored.guid, expectedVersion: stored.metadata.version,
            body: try Wire.encoder.encode(JSON.object(patch)))
        operation.base = base
        return try await outcome(of: operation, policy: policy)
    }

    /// Changes some fields (a JSON merge patch: `null` removes a field). `expectedVersion`
    /// makes it conditional.
    public func patch<Model: RoostModel>(
        _ type: Model.Type, guid: String, _ fields: [String: JSON], expectedVersion: Int? = nil
    ) async throws -> Stored<Model> {
        try await patch(type, guid: guid, fields, expectedVersion: expectedVersion, policy: .failWhenOffline)
            .stored!
    }

    /// ``patch(_:guid:_:expectedVersion:)``, queued when the server cannot be reached.
    public func patch<Model: RoostModel>(
        _ type: Model.Type, guid: String, _ fields: [String: JSON], expectedVersion: Int? = nil,
        policy: OfflinePolicy
    ) async throws -> WriteOutcome<Model> {
        let operation = makeOperation(
            .patch, Model.collection, guid, expectedVersion: expectedVersion,
            body: try Wire.encoder.encode(fields))
        return try await outcome(of: operation, policy: policy)
    }

    /// Deletes the object if nobody changed it since it was read.
    public func delete<Model: RoostModel>(_ stored: Stored<Model>, policy: OfflinePolicy = .failWhenOffline)
        async throws -> DeleteOutcome
    {
        try await delete(
            Model.self, guid: stored.guid, expectedVersion: stored.metadata.version, policy: policy)
    }

    /// Deletes the object with this guid.
    @discardableResult
    public func delete<Model: RoostModel>(
        _ type: Model.Type, guid: String, expectedVersion: Int? = nil,
        policy: OfflinePolicy = .failWhenOffline
    ) async throws -> DeleteOutcome {
        let operation = makeOperation(
            .delete, Model.collection, guid, expectedVersion: expectedVersion, body: nil)
        switch try await write(operation, policy: policy) {
        case .delivered(let response): return response.status == 404 ? .notFound : .deleted
        case .queued(let operation): return .queued(operation)
        }
    }

    // MARK: Plumbing

    enum WriteResult {
        case delivered(TransportResponse)
        case queued(QueuedOperation)
    }

    private func outcome<Model: RoostModel>(of operation: QueuedOperation, policy: OfflinePolicy) async throws
        -> WriteOutcome<Model>
    {
        switch try await write(operation, policy: policy) {
        case .delivered(let response):
            return .delivered(try Wire.decode(Stored<Model>.self, from: response.body))
        case .queued(let operation): return .queued(operation)
        }
    }

    /// Sends a write now, or (with ``OfflinePolicy/queueWhenOffline``) stores it in the queue
    /// first, so a crash between sending and hearing back cannot lose or repeat it.
    func write(_ write: QueuedOperation, policy: OfflinePolicy) async throws -> WriteResult {
        switch policy {
        case .failWhenOffline:
            let response = try await perform(write.request(body: write.body))
            remember(response, of: write)
            return .delivered(response)
        case .queueWhenOffline:
            let operation: QueuedOperation
            do {
                operation = try log.add(write)
            } catch {
                throw RoostError.storageFailed("store the write in the offline queue", error)
            }
            return try await enqueue(operation)
        }
    }

    /// Tries a write just stored in the queue (after the writes before it); it stays queued if
    /// it cannot go now.
    func enqueue(_ operation: QueuedOperation) async throws -> WriteResult {
        // Earlier writes go first; if they all get through, this one goes out now too.
        delivery.awaited.insert(operation.id)
        _ = await flush()
        delivery.awaited.remove(operation.id)
        switch delivery.results.removeValue(forKey: operation.id) {
        case .delivered(let response)?: return .delivered(response)
        case .dropped(let error)?: throw error
        case nil: break
        }
        emit(.queued(operation))
        wakeDelivery()
        return .queued(operation)
    }

    func makeOperation(
        _ kind: QueuedOperation.Kind, _ collection: String, _ guid: String, expectedVersion: Int?, body: Data?
    ) -> QueuedOperation {
        QueuedOperation(
            id: UUID().uuidString.lowercased(), sequence: log.takeSequence(), kind: kind,
            collection: collection,
            guid: guid, expectedVersion: expectedVersion, body: body, owner: credential?.userGuid,
            queuedAt: Date(), attempts: 0)
    }

    /// Keeps a write's answer as the cached copy of the object, which saves the next read.
    func remember(_ response: TransportResponse, of operation: QueuedOperation) {
        let path = Self.objectPath(operation.collection, operation.guid)
        if operation.kind == .delete || response.header("ETag") == nil {
            cache.remove(path)
        } else {
            cache.store(ResponseCache.Entry(etag: response.header("ETag"), body: response.body), for: path)
        }
    }

    static func body(of value: some RoostModel, guid: String?) throws -> Data {
        var fields = try fields(of: value)
        if let guid { fields["guid"] = .string(guid) }
        return try Wire.encoder.encode(JSON.object(fields))
    }

    /// A model's fields as it encodes them, without Roost's metadata.
    static func fields(of value: some RoostModel) throws -> [String: JSON] {
        guard case .object(var fields) = try JSON(encoding: value) else {
            throw RoostError(
                status: nil, code: .invalidBody,
                message:
                    "\(type(of: value)) must encode as a JSON object (a struct or class with keyed fields).")
        }
        for field in ObjectMetadata.fields { fields[field] = nil }
        return fields
    }

    static func objectPath(_ collection: String, _ guid: String) -> String {
        "/ff/resources/\(collection)/\(pathSegment(guid))"
    }
}

extension CharacterSet {
    /// Letters, digits and `-._~`: a path segment needs nothing else left unescaped.
    static let pathSegment = CharacterSet(
        charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~")
}

extension Roost {
    /// An object's metadata, as FatFractal's `metaDataForObj:`; the same as `object.metadata`.
    public nonisolated func metadata<Model: RoostModel>(for object: Stored<Model>) -> ObjectMetadata {
        object.metadata
    }
}
