import RoostJSON
import RoostStore

extension PushService {
    /// No provider is configured: a push would wait in the outbox forever.
    public static let notConfigured = RoostError(
        status: 503, code: .pushNotConfigured,
        message:
            "Push is not configured on this server: start roost serve with an APNs key (--apns-key-file, --apns-key-id, --apns-team-id) or an FCM service account (--fcm-service-account)."
    )

    /// `POST /ff/push` for an administrator: the audience (`users`, `devices` or `query`) and the
    /// notification's fields. Returns the push's id and the devices it was queued for.
    public func send(_ body: JSONObject, by principal: Principal) async throws -> (id: String, devices: Int) {
        guard principal.isAdmin else { throw Self.adminRequired }
        guard isConfigured else { throw Self.notConfigured }
        let audience = try await audience(in: body, principal)
        let notification = try PushNotification(fields: body, now: clock.nowMilliseconds())
        return try await send(notification, to: audience, createdBy: principal.userGuid)
    }

    /// Queues `notification` for the audience's live devices, in one transaction; wakes the
    /// dispatcher after the commit.
    public func send(_ notification: PushNotification, to audience: PushAudience, createdBy: String?)
        async throws -> (id: String, devices: Int)
    {
        guard isConfigured else { throw Self.notConfigured }
        let id = guids.makeGuid()
        let devices = try await store.enqueue(
            id: id, notification: notification.json, audience: audience, createdBy: createdBy,
            now: clock.nowMilliseconds())
        if devices > 0 { queued() }
        return (id, devices)
    }

    /// A push and up to `limit` of its deliveries, for an administrator.
    public func status(id: String, limit: Int, by principal: Principal) async throws -> PushStatus {
        guard principal.isAdmin else { throw Self.adminRequired }
        guard let status = try await store.status(id: id, limit: limit) else {
            throw RoostError(
                status: 404, code: .notFound, message: "There is no push '\(id.prefix(64))'.",
                details: RoostError.details(["id": .string(String(id.prefix(64)))]))
        }
        return status
    }

    /// Users' guids as a push names them: a list of guids, checked and without repeats.
    public static func userGuids(_ value: JSONValue?, field: String) throws -> [String] {
        guard case .array(let items)? = value else {
            throw RoostError.invalidField(field, "'\(field)' is an array of user guids.")
        }
        try checkCount(items.count, field)
        var seen = Set<String>()
        var guids: [String] = []
        for item in items {
            guard let guid = item.stringValue, ObjectService.isValidGuid(guid) else {
                throw RoostError.invalidField(field, "'\(field)' is an array of user guids.")
            }
            if seen.insert(guid).inserted { guids.append(guid) }
        }
        return guids
    }

    private func audience(in body: JSONObject, _ principal: Principal) async throws -> PushAudience {
        let named = ["users", "devices", "query"].filter { body[$0] != nil }
        guard named.count == 1 else {
            throw RoostError(
                status: 400, code: .invalidBody,
                message: "Name whom to send to with exactly one of 'users', 'devices' or 'query'.")
        }
        switch named[0] {
        case "users":
            return .users(try Self.userGuids(body["users"], field: "users"))
        case "devices":
            guard case .array(let items)? = body["devices"] else {
                throw RoostError.invalidField("devices", "'devices' is an array of {userGuid, deviceId}.")
            }
            try Self.checkCount(items.count, "devices")
            return .devices(
                try items.map { item in
                    guard let user = item.objectValue?["userGuid"]?.stringValue,
                        ObjectService.isValidGuid(user),
                        let device = item.objectValue?["deviceId"]?.stringValue, !device.isEmpty,
                        device.utf8.count <= 128
                    else {
                        throw RoostError.invalidField(
                            "devices", "'devices' is an array of {userGuid, deviceId}.")
                    }
                    return (user, device)
                })
        default:
            guard let query = body["query"]?.stringValue, query.utf8.count <= 4096 else {
                throw RoostError.invalidField("query", "'query' is a query on FFUser, at most 4096 bytes.")
            }
            let limit = Self.maximumTargets
            let page = try await objects.find(
                query: query, PageRequest(collection: AccountService.userCollection, count: limit),
                caller: principal)
            if page.documents.count == limit {
                let beyond = try await objects.find(
                    query: query,
                    PageRequest(collection: AccountService.userCollection, start: limit, count: 1),
                    caller: principal)
                if !beyond.documents.isEmpty { throw Self.tooManyTargets("query") }
            }
            return .users(
                page.documents.compactMap { document in
                    guard case .object(let user)? = try? JSONParser.parse(document) else { return nil }
                    return user["guid"]?.stringValue
                })
        }
    }

    static func checkCount(_ count: Int, _ field: String) throws {
        guard count <= maximumTargets else { throw tooManyTargets(field) }
        guard count > 0 else { throw RoostError.invalidField(field, "'\(field)' names nobody.") }
    }

    static func tooManyTargets(_ field: String) -> RoostError {
        RoostError(
            status: 400, code: .tooManyPushTargets,
            message:
                "One push goes to at most \(maximumTargets) users or devices; send several, or narrow the query.",
            details: RoostError.details(["field": .string(field), "limit": .integer(Int64(maximumTargets))]))
    }
}
