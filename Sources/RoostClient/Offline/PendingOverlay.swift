import Foundation

/// Queued writes applied on top of what the server last said, so reads show this device's own
/// writes at once ("latency compensation").
enum PendingOverlay {
    /// `document` (nil when the server has no such object, or it is not known) with the writes
    /// applied in queue order; nil when they delete the object or it never existed.
    static func apply(
        _ operations: [QueuedOperation], to document: [String: JSON]?, body: (QueuedOperation) -> Data?
    ) -> [String: JSON]? {
        var current = document
        for operation in operations {
            let fields = body(operation).flatMap { try? JSONDecoder().decode([String: JSON].self, from: $0) }
            switch operation.kind {
            case .create:
                // A create whose reply was lost may already be on the server: its copy wins.
                if current == nil, let fields { current = created(fields, by: operation) }
            case .replace:
                guard let existing = current, let fields else { continue }
                var replaced = fields
                for name in ObjectMetadata.fields { replaced[name] = existing[name] }
                current = replaced
            case .patch:
                guard let existing = current, let fields else { continue }
                current = MergePatch.apply(fields, to: existing)
            case .delete:
                current = nil
            case .upload:
                continue
            }
        }
        return current
    }

    /// A queued create as the server will store it: version 1, made by the write's owner.
    static func created(_ fields: [String: JSON], by operation: QueuedOperation) -> [String: JSON] {
        var document = fields
        let now = JSON.number((operation.queuedAt.timeIntervalSince1970 * 1000).rounded())
        let owner = operation.owner.map(JSON.string) ?? .null
        document["guid"] = .string(operation.guid)
        document["ffUrl"] = .string("/ff/resources/\(operation.collection)/\(operation.guid)")
        document["createdBy"] = owner
        document["updatedBy"] = owner
        document["createdAt"] = now
        document["updatedAt"] = now
        document["version"] = 1
        return document
    }
}

extension Roost {
    /// Queued writes that change objects of `collection` (of one object, with `guid`), oldest first.
    func pendingWrites(in collection: String, guid: String? = nil) -> [QueuedOperation] {
        log.operations.filter {
            $0.collection == collection && $0.kind != .upload && (guid == nil || $0.guid == guid)
        }
    }

    /// `document` with this object's queued writes applied.
    func overlaid(_ document: [String: JSON]?, _ operations: [QueuedOperation]) -> [String: JSON]? {
        PendingOverlay.apply(operations, to: document) { log.body(of: $0) }
    }

    /// Every object of `collection` the disk cache holds, from single reads and from lists, the
    /// newest version of each: what an offline query that was never asked before can answer from.
    func cachedDocuments(in collection: String) -> [String: [String: JSON]] {
        var documents: [String: [String: JSON]] = [:]
        func keep(_ document: [String: JSON]) {
            guard let guid = document["guid"]?.stringValue else { return }
            if let known = documents[guid]?["version"]?.intValue,
                known >= document["version"]?.intValue ?? 0
            {
                return
            }
            documents[guid] = document
        }
        let prefix = "/ff/resources/\(collection)"
        for (path, entry) in cache.entries(under: prefix) {
            let rest = path.dropFirst(prefix.count)
            guard let body = try? JSONDecoder().decode(JSON.self, from: entry.body) else { continue }
            if rest.hasPrefix("?") || rest.hasPrefix("/(") || rest.isEmpty {
                if case .array(let items)? = body["items"] {
                    for case .object(let item) in items { keep(item) }
                }
            } else if !rest.dropFirst().contains("/"), case .object(let object) = body {
                keep(object)
            }
        }
        return documents
    }

    /// Decodes one object, naming its collection, guid and field when it does not fit the model.
    static func decodeObject<Model: RoostModel>(_ document: [String: JSON], as type: Model.Type) throws
        -> Stored<Model>
    {
        let data = try Wire.encoder.encode(JSON.object(document))
        do {
            return try Wire.decoder.decode(Stored<Model>.self, from: data)
        } catch {
            throw RoostError.undecodable(
                UndecodableObject(
                    collection: Model.collection, guid: document["guid"]?.stringValue ?? "?",
                    field: RoostError.field(of: error), reason: RoostError.summary(of: error)))
        }
    }
}
