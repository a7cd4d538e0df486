import RoostCore
import RoostJSON
import RoostStore

/// `ff.sendPushNotifications(userGuids, message)` and `ff.sendIOSPush(userGuids, payload)`:
/// queued in the push outbox at the call (each of a script's writes commits on its own, so the
/// push commits after the writes before it), delivered after the script by the dispatcher.
extension FatFractalScriptAPI {
    func sendPush(_ call: ScriptCall) async throws -> JSONValue {
        try call.expectCount(2)
        guard let push else {
            throw RoostError.scriptServiceNotConfigured(call.method, service: "push notifications")
        }
        // Checked first, so a bad call fails the same whether or not push is on.
        let users = try Self.pushUsers(call)
        let notification = try Self.pushNotification(call, now: push.now)
        if push.isInactive {
            logger.scriptLine(
                level: "info",
                "\(call.method) not sent: push is inactive (settings.pushInactive, FatFractal's SET PushIsInactive true)",
                requestID: requestID, fields: [("script", scriptName)])
            return .null
        }
        guard push.service.isConfigured else {
            throw RoostError.scriptServiceNotConfigured(call.method, service: "push notifications")
        }
        let (id, devices) = try await push.send(notification, to: .users(users), createdBy: scriptName)
        return .object(
            JSONObject(uniqueMembers: [("id", .string(id)), ("devices", .integer(Int64(devices)))]))
    }

    /// The first argument: one user guid or an array of them.
    static func pushUsers(_ call: ScriptCall) throws -> [String] {
        let value = call.arguments[0]
        do {
            return try PushService.userGuids(
                value.stringValue.map { .array([.string($0)]) } ?? value, field: "userGuids")
        } catch let error as RoostError {
            throw call.invalid(0, "must be a user guid or an array of at most 1000 (\(error.message))")
        }
    }

    /// The second argument: the alert text, or the notification's fields (`title`, `body`,
    /// `badge`, `sound`, `data`, …), or for `sendIOSPush` an APNs payload (`aps` with `alert`,
    /// `badge`, `sound`, `content-available`; other keys become `data`).
    static func pushNotification(_ call: ScriptCall, now: Int64) throws -> PushNotification {
        var fields = JSONObject()
        switch call.arguments[1] {
        case .string(let text):
            fields["body"] = .string(text)
        case .object(let object) where object["aps"] != nil:
            guard case .object(let aps)? = object["aps"] else {
                throw call.invalid(1, "'aps' must be an object")
            }
            switch aps["alert"] {
            case .string(let text)?: fields["body"] = .string(text)
            case .object(let alert)?:
                for key in ["title", "subtitle", "body"] { if let value = alert[key] { fields[key] = value } }
            default: break
            }
            for key in ["badge", "sound"] { if let value = aps[key] { fields[key] = value } }
            if aps["content-available"]?.integerValue == 1 { fields["contentAvailable"] = .bool(true) }
            if let thread = aps["thread-id"] { fields["threadId"] = thread }
            var data = object
            data.removeAll { key, _ in key == "aps" }
            if !data.isEmpty { fields["data"] = .object(data) }
        case .object(let object):
            fields = object
        default:
            throw call.invalid(1, "must be the message text or an object of the notification's fields")
        }
        do {
            return try PushNotification(fields: fields, now: now)
        } catch {
            throw call.invalid(1, error.message)
        }
    }
}

/// What the script API needs of push: the service (nil: no provider configured) and whether
/// the app definition turned push off.
public struct ScriptPush: Sendable {
    let service: PushService
    let definitions: AppDefinitionSource

    public init(service: PushService, definitions: AppDefinitionSource) {
        self.service = service
        self.definitions = definitions
    }

    var isInactive: Bool { definitions.definition.settings.pushInactive }
    var now: Int64 { service.clock.nowMilliseconds() }

    func send(_ notification: PushNotification, to audience: PushAudience, createdBy: String?) async throws
        -> (id: String, devices: Int)
    {
        try await service.send(notification, to: audience, createdBy: createdBy)
    }
}
