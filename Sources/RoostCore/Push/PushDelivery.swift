import RoostJSON

// The boundary between Roost's push outbox and the providers (APNs, FCM): the core decides who
// receives what and keeps it durable; a `PushSender` only speaks one provider's protocol.

/// The provider a device token belongs to.
public enum PushPlatform: String, Sendable, Hashable, CaseIterable {
    case apns
    case fcm
}

/// APNs issues different tokens for development and production builds of an app.
public enum APNsEnvironment: String, Sendable, Hashable, CaseIterable {
    case sandbox
    case production
}

/// One device to deliver to.
public struct PushTarget: Sendable, Hashable {
    public var platform: PushPlatform
    /// The provider's device token (APNs: hex; FCM: the registration token).
    public var token: String
    /// APNs only: which gateway the token is valid on.
    public var environment: APNsEnvironment?
    /// The app's bundle id (APNs `apns-topic`) or FCM package name.
    public var bundleID: String

    public init(platform: PushPlatform, token: String, environment: APNsEnvironment?, bundleID: String) {
        self.platform = platform
        self.token = token
        self.environment = environment
        self.bundleID = bundleID
    }
}

/// What a notification says and how it is delivered, independent of the provider.
public struct PushNotification: Sendable, Equatable {
    public enum Priority: String, Sendable, Equatable {
        /// Delivered at once (APNs 10, FCM HIGH).
        case high
        /// May be delayed to save power (APNs 5, FCM NORMAL).
        case normal
    }

    public var title: String?
    public var subtitle: String?
    public var body: String?
    public var badge: Int?
    public var sound: String?
    /// Custom data delivered beside the alert (an object).
    public var data: JSONValue?
    public var collapseID: String?
    public var threadID: String?
    public var priority: Priority
    /// Milliseconds since 1970 after which the provider should not deliver; nil: its default.
    public var expiresAt: Int64?
    /// A background update (APNs `content-available: 1`, push type `background`).
    public var contentAvailable: Bool

    public init(
        title: String? = nil, subtitle: String? = nil, body: String? = nil, badge: Int? = nil,
        sound: String? = nil, data: JSONValue? = nil, collapseID: String? = nil, threadID: String? = nil,
        priority: Priority = .high, expiresAt: Int64? = nil, contentAvailable: Bool = false
    ) {
        self.title = title
        self.subtitle = subtitle
        self.body = body
        self.badge = badge
        self.sound = sound
        self.data = data
        self.collapseID = collapseID
        self.threadID = threadID
        self.priority = priority
        self.expiresAt = expiresAt
        self.contentAvailable = contentAvailable
    }
}

/// What a provider said about one send.
public enum PushOutcome: Sendable, Equatable {
    /// Accepted; the provider's id for it when it gives one (`apns-id`, FCM message name).
    case delivered(providerID: String?)
    /// The token is dead (APNs 410 `Unregistered`, 400 `BadDeviceToken`; FCM `UNREGISTERED`):
    /// delete it, and only then.
    case invalidToken(reason: String)
    /// Try again later (429, 5xx, a lost connection); `after` is the provider's `Retry-After`.
    case retry(after: Duration?, reason: String)
    /// The provider refused this notification for good (payload too large, bad topic, bad
    /// credentials): record it, do not retry.
    case rejected(reason: String)
}

/// Speaks one provider's protocol. Implementations own their connections and credentials and are
/// safe to call concurrently; `send` never throws: every failure is an outcome.
public protocol PushSender: Sendable {
    func send(_ notification: PushNotification, to target: PushTarget) async -> PushOutcome
    /// Closes connections; sends after this answer `.retry`.
    func shutdown() async
}
