import RoostJSON
import RoostStore

/// What the object service asks around each write: the app's PRE and POST handlers. The service
/// asks ``runs(_:on:in:)`` first, so a write no handler watches costs one scan of the (usually
/// empty) handler list.
public protocol ObjectWriteHooks: Sendable {
    /// Whether any handler of `phase` runs for `event` on `collection` under the definition in force.
    func runs(_ phase: ScriptHandler.Phase, on event: ScriptHandler.Event, in collection: String) -> Bool
    /// PRE handlers, before the write: throw to refuse it, or return the object's fields as the
    /// handlers left them (metadata and blob members are ignored), or nil to keep them.
    /// `previous` is the object an update replaces.
    func beforeWrite(
        _ event: ScriptHandler.Event, object: StoredObject, previous: StoredObject?, caller: Principal?,
        origin: WriteOrigin?
    ) async throws -> JSONObject?
    /// POST handlers, after the write committed and before the client's answer. A failure is
    /// theirs to log: the write stands. `previous` is the object an update replaced.
    func afterWrite(
        _ event: ScriptHandler.Event, object: StoredObject, previous: StoredObject?, caller: Principal?,
        origin: WriteOrigin?
    ) async
}

/// The request a write is made for: its id, which the handlers' log lines carry, and the client
/// (its address, an IPv6 /64 as one), by which an anonymous caller's handlers take their turn in
/// the script pool.
public struct WriteOrigin: Sendable, Equatable {
    public var requestID: String
    public var client: String

    public init(requestID: String, client: String) {
        self.requestID = requestID
        self.client = client
    }
}

extension ObjectService {
    /// The same service, whose writes run no PRE or POST handler: scripts write through it, so a
    /// handler's own writes never re-enter the script pool (no recursion, no pool deadlock).
    public func withoutHooks() -> ObjectService {
        var copy = self
        copy.hooks = nil
        return copy
    }

    /// The same service, writing for this request: the handlers its writes run log with its id,
    /// so a script's lines join the request's, and an anonymous caller's take turns by client.
    public func serving(_ origin: WriteOrigin) -> ObjectService {
        var copy = self
        copy.origin = origin
        return copy
    }

    /// `object` as PRE handlers leave it: their field changes, with the metadata, the access list
    /// and the blob members as they were.
    func applyingPreHandlers(
        _ event: ScriptHandler.Event, to object: StoredObject, previous: StoredObject? = nil,
        caller: Principal?
    ) async throws -> StoredObject {
        guard let hooks, hooks.runs(.pre, on: event, in: object.collection) else { return object }
        guard
            let changed = try await hooks.beforeWrite(
                event, object: object, previous: previous, caller: caller, origin: origin),
            event != .delete
        else { return object }
        let (fields, _) = try Self.split(object.document)
        var next = changed
        next.removeAll { key, value in Self.reservedFields.contains(key) || BlobDescriptor.isDescriptor(value)
        }
        for member in fields.members where BlobDescriptor.isDescriptor(member.value) {
            next[member.key] = member.value
        }
        var rebuilt = Self.makeObject(
            collection: object.collection, guid: object.guid, fields: next, createdBy: object.createdBy,
            createdAt: object.createdAt, updatedBy: object.updatedBy, updatedAt: object.updatedAt,
            version: object.version)
        rebuilt.acl = object.acl
        return rebuilt
    }

    /// POST handlers of a committed write.
    func runPostHandlers(
        _ event: ScriptHandler.Event, _ object: StoredObject, previous: StoredObject? = nil,
        caller: Principal?
    ) async {
        guard let hooks, hooks.runs(.post, on: event, in: object.collection) else { return }
        await hooks.afterWrite(
            event, object: object, previous: previous, caller: caller, origin: origin)
    }
}
