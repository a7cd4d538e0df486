import RoostJSON

/// The limits on what a push says, each with a number (DESIGN.md, "Hostile clients").
public enum PushLimits {
    /// Bytes of the stored notification: APNs takes at most 4 KiB of payload, FCM 4 KB of data.
    public static let maximumNotificationBytes = 4096
    public static let maximumTitleBytes = 256
    public static let maximumBodyBytes = 2048
    public static let maximumSoundBytes = 256
    /// APNs' `apns-collapse-id` takes at most 64 bytes.
    public static let maximumCollapseIDBytes = 64
    public static let maximumThreadIDBytes = 256
    public static let maximumBadge: Int64 = 99_999
    /// FCM keeps a message at most 28 days.
    public static let maximumExpirationSeconds: Int64 = 28 * 24 * 3600
}

extension PushNotification {
    /// The notification fields of a `POST /ff/push` body (or a script's message), checked
    /// against ``PushLimits``; `now` turns a relative `expiration` (seconds) into `expiresAt`.
    public init(fields body: JSONObject, now: Int64) throws(RoostError) {
        func text(_ name: String, _ limit: Int) throws(RoostError) -> String? {
            guard let value = body[name], value != .null else { return nil }
            guard case .string(let text) = value else {
                throw RoostError.invalidField(name, "'\(name)' must be a string.")
            }
            guard text.utf8.count <= limit else {
                throw RoostError.invalidField(name, "'\(name)' takes at most \(limit) bytes of UTF-8.")
            }
            return text
        }
        func integer(_ name: String, _ range: ClosedRange<Int64>) throws(RoostError) -> Int64? {
            guard let value = body[name], value != .null else { return nil }
            guard let number = value.integerValue, range.contains(number) else {
                throw RoostError.invalidField(
                    name, "'\(name)' must be a whole number from \(range.lowerBound) to \(range.upperBound).")
            }
            return number
        }
        self.init(
            title: try text("title", PushLimits.maximumTitleBytes),
            subtitle: try text("subtitle", PushLimits.maximumTitleBytes),
            body: try text("body", PushLimits.maximumBodyBytes),
            badge: try integer("badge", 0...PushLimits.maximumBadge).map { Int($0) },
            sound: try text("sound", PushLimits.maximumSoundBytes),
            collapseID: try text("collapseId", PushLimits.maximumCollapseIDBytes),
            threadID: try text("threadId", PushLimits.maximumThreadIDBytes))
        if let data = body["data"], data != .null {
            guard case .object = data else {
                throw RoostError.invalidField("data", "'data' must be an object.")
            }
            self.data = data
        }
        switch body["priority"] {
        case nil, .null, .string("high"), .number("10"): priority = .high
        case .string("normal"), .number("5"): priority = .normal
        default:
            throw RoostError.invalidField("priority", "'priority' is \"high\" (the default) or \"normal\".")
        }
        if let absolute = try integer("expiresAt", 0...Int64.max / 2) {
            expiresAt = absolute
        } else if let seconds = try integer("expiration", 0...PushLimits.maximumExpirationSeconds) {
            expiresAt = now + seconds * 1000
        }
        switch body["contentAvailable"] {
        case nil, .null, .bool(false): contentAvailable = false
        case .bool(true): contentAvailable = true
        default:
            throw RoostError.invalidField("contentAvailable", "'contentAvailable' must be true or false.")
        }
        guard
            title != nil || self.body != nil || data != nil || badge != nil || sound != nil
                || contentAvailable
        else {
            throw RoostError(
                status: 400, code: .invalidBody,
                message:
                    "A push needs something to say: a title, body, badge, sound, data or contentAvailable: true."
            )
        }
        guard json.utf8.count <= PushLimits.maximumNotificationBytes else {
            throw RoostError(
                status: 413, code: .pushTooLarge,
                message:
                    "A notification takes at most \(PushLimits.maximumNotificationBytes) bytes as JSON (APNs' payload limit).",
                details: RoostError.details([
                    "maximumBytes": .integer(Int64(PushLimits.maximumNotificationBytes))
                ]))
        }
    }

    /// The notification as the outbox stores it.
    public var json: String {
        var object = JSONObject()
        func set(_ key: String, _ value: String?) { if let value { object[key] = .string(value) } }
        set("title", title)
        set("subtitle", subtitle)
        set("body", body)
        if let badge { object["badge"] = .integer(Int64(badge)) }
        set("sound", sound)
        if let data { object["data"] = data }
        set("collapseId", collapseID)
        set("threadId", threadID)
        object["priority"] = .string(priority.rawValue)
        if let expiresAt { object["expiresAt"] = .integer(expiresAt) }
        if contentAvailable { object["contentAvailable"] = .bool(true) }
        return JSONWriter.string(.object(object))
    }

    /// A notification the outbox stored (``json``); nil when it does not parse.
    public init?(stored text: String) {
        guard case .object(let object)? = try? JSONParser.parse(text) else { return nil }
        self.init(
            title: object["title"]?.stringValue, subtitle: object["subtitle"]?.stringValue,
            body: object["body"]?.stringValue, badge: object["badge"]?.integerValue.map { Int($0) },
            sound: object["sound"]?.stringValue, data: object["data"],
            collapseID: object["collapseId"]?.stringValue, threadID: object["threadId"]?.stringValue,
            priority: object["priority"]?.stringValue == "normal" ? .normal : .high,
            expiresAt: object["expiresAt"]?.integerValue,
            contentAvailable: object["contentAvailable"] == .bool(true))
    }
}
