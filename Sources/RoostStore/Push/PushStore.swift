/// A device's push token as stored: one row per user and device, one row per token.
public struct PushDeviceRecord: Sendable, Equatable {
    public var userGuid: String
    public var deviceId: String
    /// `apns` or `fcm`.
    public var platform: String
    public var token: String
    /// APNs only: `sandbox` or `production`.
    public var environment: String?
    public var bundleID: String
    /// Milliseconds since 1970.
    public var createdAt: Int64
    public var updatedAt: Int64
    /// Whether a push reaches the device now (a session on it is live); set in listings only.
    public var receiving: Bool?

    public init(
        userGuid: String, deviceId: String, platform: String, token: String, environment: String?,
        bundleID: String, createdAt: Int64, updatedAt: Int64
    ) {
        self.userGuid = userGuid
        self.deviceId = deviceId
        self.platform = platform
        self.token = token
        self.environment = environment
        self.bundleID = bundleID
        self.createdAt = createdAt
        self.updatedAt = updatedAt
    }
}

/// Why a device could not be registered.
public enum PushStoreError: Error, Sendable, Equatable {
    /// The user has this many devices already (the cap), none of them this one.
    case tooManyDevices(limit: Int)
}

/// What a push is sent to: users (each one's live devices) or named devices.
public enum PushAudience: Sendable, Equatable {
    case users([String])
    case devices([(userGuid: String, deviceId: String)])

    public static func == (lhs: PushAudience, rhs: PushAudience) -> Bool {
        switch (lhs, rhs) {
        case (.users(let left), .users(let right)): left == right
        case (.devices(let left), .devices(let right)):
            left.map { [$0.userGuid, $0.deviceId] } == right.map { [$0.userGuid, $0.deviceId] }
        default: false
        }
    }
}

/// One device's delivery of one push, claimed by a dispatcher to send.
public struct PushDelivery: Sendable, Equatable {
    public var pushID: String
    public var userGuid: String
    public var deviceId: String
    /// Sends tried so far, this one included.
    public var attempts: Int
    /// The device's token as it is now (a token that moved since the push was queued goes along).
    public var platform: String
    public var token: String
    public var environment: String?
    public var bundleID: String
    /// The stored notification (``PushNotification`` as JSON text).
    public var notification: String
    /// A previous dispatcher marked it in flight and never recorded its answer: it may have been
    /// delivered already.
    public var uncertain: Bool

    public init(
        pushID: String, userGuid: String, deviceId: String, attempts: Int, platform: String, token: String,
        environment: String?, bundleID: String, notification: String, uncertain: Bool
    ) {
        self.pushID = pushID
        self.userGuid = userGuid
        self.deviceId = deviceId
        self.attempts = attempts
        self.platform = platform
        self.token = token
        self.environment = environment
        self.bundleID = bundleID
        self.notification = notification
        self.uncertain = uncertain
    }
}

/// Where one delivery ended up, as the outbox records it.
public enum PushDeliveryState: String, Sendable, CaseIterable {
    /// Waiting for its first send or its next retry.
    case pending
    /// Marked in flight before the send; its answer not recorded yet.
    case sending
    case delivered
    /// Given up after the last retry.
    case failed
    /// The provider refused it for good.
    case rejected
    /// The provider said the token is dead; the device row is gone.
    case invalid
    /// Not sent: the device or its live session went away before the send.
    case skipped

    /// Whether the delivery is finished.
    public var isFinal: Bool { self != .pending && self != .sending }
}

/// What a dispatcher records after a send.
public enum PushRecordedOutcome: Sendable, Equatable {
    case delivered(providerID: String?)
    /// Deletes the device row too, if it still holds the token that was sent to.
    case invalidToken(reason: String)
    /// Retry at `nextAttempt` (milliseconds), or give up when nil.
    case retry(nextAttempt: Int64?, reason: String)
    case rejected(reason: String)
}

/// One delivery as `GET /ff/push/{id}` shows it.
public struct PushDeliveryStatus: Sendable, Equatable {
    public var userGuid: String
    public var deviceId: String
    public var state: PushDeliveryState
    public var attempts: Int
    public var error: String?
    public var providerID: String?
    public var updatedAt: Int64
}

/// A push as queued, with its deliveries' states.
public struct PushStatus: Sendable, Equatable {
    public var id: String
    public var createdAt: Int64
    public var createdBy: String?
    public var targeted: Int
    public var deliveries: [PushDeliveryStatus]
}

/// Devices' push tokens and the push outbox, on the database the accounts are in: a device
/// receives while a live session token exists for it, decided by a join at fan-out and again
/// when a delivery is claimed.
public protocol PushStore: Sendable {
    /// Stores or replaces the user's device; a token another device held moves here. Throws
    /// ``PushStoreError/tooManyDevices(limit:)`` when the user has `limit` other devices.
    func register(_ device: PushDeviceRecord, limit: Int) async throws -> PushDeviceRecord

    /// The device row, if any.
    func device(userGuid: String, deviceId: String) async throws -> PushDeviceRecord?

    /// Devices by user then device id, after the cursor, at most `limit`; one user's or everyone's,
    /// each with ``PushDeviceRecord/receiving`` as of `now`.
    func devices(userGuid: String?, after: (userGuid: String, deviceId: String)?, limit: Int, now: Int64)
        async throws
        -> [PushDeviceRecord]

    /// Deletes a device row; false when there was none.
    func deleteDevice(userGuid: String, deviceId: String) async throws -> Bool

    /// Queues a push in one transaction: its notification and one delivery for each device of
    /// the audience that has a live session at `now`. Returns the deliveries queued.
    func enqueue(
        id: String, notification: String, audience: PushAudience, createdBy: String?, now: Int64
    ) async throws -> Int

    /// Takes or renews the dispatch lease for `holder` (as ``ScriptOutboxStore/claimLease``).
    func claimLease(holder: String, for duration: Duration) async throws -> Bool
    func releaseLease(holder: String) async throws

    /// Whether any delivery is due at `now`, or in flight by a dispatcher other than `instance`.
    func hasWork(now: Int64, instance: String) async throws -> Bool

    /// In one transaction: deliveries a dispatcher other than `instance` left in flight become
    /// due again (marked uncertain); deliveries due at `now` whose device or live session is
    /// gone are skipped; up to `limit` others are marked in flight by `instance` (their attempts
    /// counted) and returned. Nothing when `holder` does not hold the lease.
    func claimDue(now: Int64, limit: Int, holder: String, instance: String) async throws -> [PushDelivery]

    /// Records a send's outcome, if the delivery is still in flight by `instance`; returns
    /// whether a device row was deleted.
    func record(
        _ outcome: PushRecordedOutcome, pushID: String, userGuid: String, deviceId: String, token: String,
        instance: String, now: Int64
    ) async throws -> Bool

    /// Deliveries not finished (pending or in flight).
    func queueDepth() async throws -> Int

    /// Deletes finished deliveries, and pushes with none left, updated before `cutoff`.
    func prune(finishedBefore cutoff: Int64) async throws

    /// A push and up to `limit` of its deliveries.
    func status(id: String, limit: Int) async throws -> PushStatus?
}
