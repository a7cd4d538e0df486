import RoostCore
import RoostJSON

/// What APNs is sent for one notification: the `apns-*` headers and the JSON payload, checked
/// against Apple's limits before anything goes on the wire.
struct APNsRequest: Equatable {
    static let maximumPayloadBytes = 4096
    static let maximumCollapseIDBytes = 64

    /// `apns-*` header lines (authorization is added per attempt).
    var headers: [String]
    var payload: [UInt8]

    /// The request, or why APNs would refuse it.
    static func make(_ notification: PushNotification, topic: String) -> Result<APNsRequest, Refusal> {
        var aps: [(key: String, value: JSONValue)] = []
        var alert: [(key: String, value: JSONValue)] = []
        if let title = notification.title { alert.append(("title", .string(title))) }
        if let subtitle = notification.subtitle { alert.append(("subtitle", .string(subtitle))) }
        if let body = notification.body { alert.append(("body", .string(body))) }
        if !alert.isEmpty { aps.append(("alert", .object(JSONObject(uniqueMembers: alert)))) }
        if let badge = notification.badge { aps.append(("badge", .integer(Int64(badge)))) }
        if let sound = notification.sound { aps.append(("sound", .string(sound))) }
        if let threadID = notification.threadID { aps.append(("thread-id", .string(threadID))) }
        if notification.contentAvailable { aps.append(("content-available", .integer(1))) }
        var members: [(key: String, value: JSONValue)] = [("aps", .object(JSONObject(uniqueMembers: aps)))]
        switch notification.data {
        case nil, .null?: break
        case .object(let data)?:
            if data["aps"] != nil { return .failure(Refusal("custom data may not use the key aps")) }
            members += data.members
        case let other?:
            return .failure(Refusal("custom data must be an object, not \(other.typeName)"))
        }
        let payload = JSONWriter.bytes(.object(JSONObject(uniqueMembers: members)))
        guard payload.count <= maximumPayloadBytes else {
            return .failure(
                Refusal("the APNs payload is \(payload.count) bytes; the limit is \(maximumPayloadBytes)"))
        }

        // A background push carries no alert, badge or sound, and must go at priority 5.
        let background =
            notification.contentAvailable && alert.isEmpty && notification.badge == nil
            && notification.sound == nil
        var headers = [
            "apns-topic: \(topic)",
            "apns-push-type: \(background ? "background" : "alert")",
            "apns-priority: \(background || notification.priority == .normal ? 5 : 10)",
            "content-type: application/json",
        ]
        if let expiresAt = notification.expiresAt {
            headers.append("apns-expiration: \(max(0, expiresAt / 1000))")
        }
        if let collapseID = notification.collapseID {
            guard collapseID.utf8.count <= maximumCollapseIDBytes else {
                return .failure(
                    Refusal(
                        "the collapse id is \(collapseID.utf8.count) bytes; APNs allows \(maximumCollapseIDBytes)"
                    ))
            }
            headers.append("apns-collapse-id: \(collapseID)")
        }
        if let bad = ([topic] + [notification.collapseID].compactMap { $0 }).first(where: Self.breaksHeader) {
            return .failure(Refusal("\"\(bad)\" cannot be sent in an HTTP header"))
        }
        return .success(APNsRequest(headers: headers, payload: payload))
    }

    /// A control character (a line break above all) would end the header early.
    private static func breaksHeader(_ value: String) -> Bool {
        value.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7f }
    }

    struct Refusal: Error, Equatable {
        var reason: String
        init(_ reason: String) { self.reason = reason }
    }
}

/// What an APNs answer means for the sender.
enum APNsAnswer: Equatable {
    case outcome(PushOutcome)
    /// `ExpiredProviderToken`: mint a new JWT and send once more.
    case renewProviderToken

    /// Apple's table: 200 accepted; 410 the token is no longer active; 400 `BadDeviceToken`; 403
    /// `ExpiredProviderToken`; 429 and 5xx come back later; every other answer is final.
    init(status: Int, headers: [String: String], body: [UInt8]) {
        let reason =
            (try? JSONParser.parse(body))?.objectValue?["reason"]?.stringValue
            ?? (status == 200 ? "" : "no reason given")
        switch status {
        case 200:
            self = .outcome(.delivered(providerID: headers["apns-id"]))
        case 410:
            self = .outcome(.invalidToken(reason: reason))
        case 400 where reason == "BadDeviceToken":
            self = .outcome(.invalidToken(reason: reason))
        case 403 where reason == "ExpiredProviderToken":
            self = .renewProviderToken
        case 429, 500...599:
            self = .outcome(.retry(after: retryAfter(headers), reason: "APNs \(status) \(reason)"))
        default:
            self = .outcome(.rejected(reason: "APNs \(status) \(reason)"))
        }
    }
}

/// `Retry-After` in seconds (the HTTP-date form is not used by the providers).
func retryAfter(_ headers: [String: String]) -> Duration? {
    guard let text = headers["retry-after"], let seconds = Int64(text), seconds >= 0 else { return nil }
    return .seconds(seconds)
}
