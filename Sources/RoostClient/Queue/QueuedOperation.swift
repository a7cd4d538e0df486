import Foundation

/// A write waiting in the offline queue, stored on disk until the server has it.
public struct QueuedOperation: Codable, Sendable, Identifiable, Equatable {
    /// What the write does.
    public enum Kind: String, Codable, Sendable {
        case create, replace, patch, delete
        /// Bytes for a blob member (``QueuedOperation/member``).
        case upload
    }

    /// Unique; also sent as the `Idempotency-Key`, so a resend after a lost reply is not run twice.
    public let id: String
    /// Position in the queue: writes go out in this order.
    public let sequence: Int64
    /// Create, replace, patch, delete or upload.
    public internal(set) var kind: Kind
    /// The collection written to.
    public let collection: String
    /// The object's guid; for a create it is chosen on the device, so it is usable at once.
    public let guid: String
    /// The version the write expects (`If-Match`); advanced when an earlier queued write to the
    /// same object lands, since this device's writes are meant to apply in order.
    public internal(set) var expectedVersion: Int?
    /// The body, if the write has one: JSON, or an upload's bytes; nil when kept in ``bodyFile``.
    public internal(set) var body: Data?
    /// The file (in the queue's `queue-bodies` folder) holding a large body, so the queue file
    /// stays small and the bytes stay out of memory until they are sent.
    public internal(set) var bodyFile: String? = nil
    /// The blob member an upload writes.
    public var member: String? = nil
    /// An upload's media type.
    public var contentType: String? = nil
    /// The guid of the user whose token sends it; nil for an anonymous write.
    public let owner: String?
    /// When the app asked for the write.
    public let queuedAt: Date
    /// How many times it has been sent without a final answer.
    public internal(set) var attempts: Int
    /// The `Idempotency-Key` when it is not ``id``: a write rebased after a conflict is a new
    /// request (the server recorded the 412 under the old key).
    var requestKey: String? = nil
    /// For an update: the model's fields as read, which the patch in ``body`` changes; lets a
    /// conflict be rebased field by field.
    public internal(set) var base: [String: JSON]? = nil

    var method: String {
        switch kind {
        case .create: "POST"
        case .replace, .upload: "PUT"
        case .patch: "PATCH"
        case .delete: "DELETE"
        }
    }

    var path: String {
        switch kind {
        case .create: "/ff/resources/\(collection)"
        case .upload: "/ff/resources/\(collection)/\(guid)/\(member ?? "")"
        default: "/ff/resources/\(collection)/\(guid)"
        }
    }

    /// The request to send with `body` (``body``, or what ``bodyFile`` holds); the client adds
    /// the token.
    func request(body: Data?) -> TransportRequest {
        var headers = ["Idempotency-Key": requestKey ?? id]
        if body != nil || bodyFile != nil { headers["Content-Type"] = contentType ?? "application/json" }
        if let expectedVersion { headers["If-Match"] = "\"\(expectedVersion)\"" }
        return TransportRequest(method: method, path: path, headers: headers, body: body)
    }
}

/// What happened to a queued write, as ``Roost/queueEvents()`` reports it.
public enum QueueEvent: Sendable, Equatable {
    /// The write was stored in the queue.
    case queued(QueuedOperation)
    /// The server has the write; `status` is its answer.
    case sent(QueuedOperation, status: Int)
    /// The server refused the write for good; it was dropped.
    case failed(QueuedOperation, RoostError)
    /// Delivery waits until the owner of the next write logs in.
    case waitingForLogin(QueuedOperation)
    /// The write could not be delivered now (no connection, or the server asked to wait); it
    /// stays queued and is tried again in `retryAfter` seconds. `reachable`: the server answered.
    case deferred(QueuedOperation, retryAfter: TimeInterval, reachable: Bool)
    /// The object changed on the server since this device read it (412); the report says which
    /// fields both sides changed and how it was settled. A write dropped by it also gets `.failed`.
    case conflict(QueuedOperation, ConflictReport)
}

/// What the server's answer means for a queued write. A value type so the rules are tested
/// without a network.
enum DeliveryVerdict: Equatable {
    /// Done; `version` is the object's new version, if the answer had one.
    case delivered(version: Int?)
    /// Try again later; `reachable` tells whether the server answered at all.
    case retry(after: TimeInterval?, reachable: Bool)
    /// A create answered 409: it may have landed before with its reply lost; look.
    case confirmCreate
    /// The look after a 409 could not be made; try the whole write again later.
    case confirmCreateRetry(after: TimeInterval?, reachable: Bool)
    /// Needs its owner to log in.
    case waitForLogin
    /// Refused for good.
    case drop(RoostError)
    /// The object changed since the write's version (412): rebase it on the server's copy.
    case conflict

    static func judge(_ operation: QueuedOperation, _ outcome: Result<TransportResponse, RoostError>)
        -> DeliveryVerdict
    {
        let response: TransportResponse
        switch outcome {
        case .failure(let error):
            return error.isFromServer ? .drop(error) : .retry(after: nil, reachable: false)
        case .success(let answer): response = answer
        }
        if (200..<300).contains(response.status) {
            return .delivered(version: Self.version(in: response))
        }
        let error = RoostError.from(response)
        switch response.status {
        // An anonymous write refused for want of a login will never be sent with a token.
        case 401: return operation.owner == nil ? .drop(error) : .waitForLogin
        case 404 where operation.kind == .delete: return .delivered(version: nil)
        case 412 where operation.kind != .create && operation.kind != .upload: return .conflict
        // Deleted elsewhere since it was read: reported as a conflict, not a bare failure.
        case 404
        where (operation.kind == .patch || operation.kind == .replace) && operation.expectedVersion != nil:
            return .conflict
        case 409 where operation.kind == .create && error.code == .conflict: return .confirmCreate
        // The server made the write but crashed before recording its answer: done.
        case 409 where error.code == .idempotencyKeyLostAnswer: return .delivered(version: nil)
        default:
            guard error.isTransient else { return .drop(error) }
            let retryAfter = response.header("Retry-After").flatMap(Int.init).map { TimeInterval($0) }
            return .retry(after: retryAfter, reachable: true)
        }
    }

    static func version(in response: TransportResponse) -> Int? {
        if let tag = response.header("ETag"), let version = Int(tag.trimmingCharacters(in: ["\"", "W", "/"]))
        {
            return version
        }
        return (try? JSONDecoder().decode(JSON.self, from: response.body))?["version"]?.intValue
    }
}

extension [QueuedOperation] {
    /// Later writes to the object that expected the version `delivered` replaced now expect the
    /// version it produced.
    func rebased(after delivered: QueuedOperation, newVersion: Int) -> [QueuedOperation] {
        // An unconditional write says nothing of the version before it; a create's successors
        // already expect version 1.
        guard let before = delivered.expectedVersion else { return self }
        return map { operation in
            guard operation.collection == delivered.collection, operation.guid == delivered.guid,
                operation.sequence > delivered.sequence, operation.expectedVersion == before
            else { return operation }
            var rebased = operation
            rebased.expectedVersion = newVersion
            return rebased
        }
    }
}
