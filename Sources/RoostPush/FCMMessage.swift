import RoostCore
import RoostJSON

/// The body of an FCM HTTP v1 `messages:send` for one notification.
enum FCMMessage {
    static func body(_ notification: PushNotification, token: String, nowMilliseconds: Int64) -> Result<
        [UInt8], APNsRequest.Refusal
    > {
        var message: [(key: String, value: JSONValue)] = [("token", .string(token))]
        var shown: [(key: String, value: JSONValue)] = []
        if let title = notification.title { shown.append(("title", .string(title))) }
        if let body = notification.body { shown.append(("body", .string(body))) }
        if !shown.isEmpty { message.append(("notification", .object(JSONObject(uniqueMembers: shown)))) }
        switch notification.data {
        case nil, .null?: break
        case .object(let data)?:
            // FCM's data values are strings: other JSON values travel as their JSON text.
            let strings = data.members.map { member -> (key: String, value: JSONValue) in
                (member.key, .string(member.value.stringValue ?? JSONWriter.string(member.value)))
            }
            if !strings.isEmpty { message.append(("data", .object(JSONObject(uniqueMembers: strings)))) }
        case let other?:
            return .failure(APNsRequest.Refusal("custom data must be an object, not \(other.typeName)"))
        }

        var android: [(key: String, value: JSONValue)] = [
            ("priority", .string(notification.priority == .high ? "HIGH" : "NORMAL"))
        ]
        if let collapseID = notification.collapseID { android.append(("collapse_key", .string(collapseID))) }
        if let expiresAt = notification.expiresAt {
            android.append(("ttl", .string("\(max(0, (expiresAt - nowMilliseconds) / 1000))s")))
        }
        message.append(("android", .object(JSONObject(uniqueMembers: android))))

        // What only iOS devices behind FCM understand goes in the APNs block.
        var aps: [(key: String, value: JSONValue)] = []
        if let subtitle = notification.subtitle {
            aps.append(("alert", .object(JSONObject(uniqueMembers: [("subtitle", .string(subtitle))]))))
        }
        if let badge = notification.badge { aps.append(("badge", .integer(Int64(badge)))) }
        if let sound = notification.sound { aps.append(("sound", .string(sound))) }
        if let threadID = notification.threadID { aps.append(("thread-id", .string(threadID))) }
        if notification.contentAvailable { aps.append(("content-available", .integer(1))) }
        var apnsHeaders: [(key: String, value: JSONValue)] = [
            (
                "apns-priority",
                .string(notification.priority == .high && !notification.contentAvailable ? "10" : "5")
            )
        ]
        if let collapseID = notification.collapseID {
            apnsHeaders.append(("apns-collapse-id", .string(collapseID)))
        }
        if let expiresAt = notification.expiresAt {
            apnsHeaders.append(("apns-expiration", .string(String(max(0, expiresAt / 1000)))))
        }
        let payload = JSONObject(uniqueMembers: [("aps", .object(JSONObject(uniqueMembers: aps)))])
        message.append(
            (
                "apns",
                .object(
                    JSONObject(uniqueMembers: [
                        ("headers", .object(JSONObject(uniqueMembers: apnsHeaders))),
                        ("payload", .object(payload)),
                    ]))
            ))
        let body = JSONObject(uniqueMembers: [("message", .object(JSONObject(uniqueMembers: message)))])
        return .success(JSONWriter.bytes(.object(body)))
    }
}

/// What an FCM answer means for the sender.
enum FCMAnswer: Equatable {
    case outcome(PushOutcome)
    /// 401: the access token was refused; fetch a new one and send once more.
    case refreshAccessToken

    /// Google's `google.rpc.Status` error body; the FCM error code sits in `details[].errorCode`.
    init(status: Int, headers: [String: String], body: [UInt8]) {
        let parsed = (try? JSONParser.parse(body))?.objectValue
        if status == 200 {
            self = .outcome(.delivered(providerID: parsed?["name"]?.stringValue))
            return
        }
        let error = parsed?["error"]?.objectValue
        var errorCode: String?
        if case .array(let details)? = error?["details"] {
            errorCode = details.lazy.compactMap { $0.objectValue?["errorCode"]?.stringValue }.first
        }
        let code = errorCode ?? error?["status"]?.stringValue ?? "no status given"
        let message = error?["message"]?.stringValue.map { ": " + $0 } ?? ""
        switch status {
        case 400 where errorCode == "UNREGISTERED", 404 where errorCode == "UNREGISTERED":
            self = .outcome(.invalidToken(reason: "UNREGISTERED"))
        case 401:
            self = .refreshAccessToken
        case 429, 500...599:
            self = .outcome(.retry(after: retryAfter(headers), reason: "FCM \(status) \(code)"))
        default:
            self = .outcome(.rejected(reason: "FCM \(status) \(code)\(message)"))
        }
    }
}
