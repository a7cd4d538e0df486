/// A device's push token, kept on the device's row beside its sessions.
public struct PushDeviceRecord: Sendable, Equatable {
    public var userGuid: String
    public var deviceId: String
    /// `apns` or `fcm`.
    public var platform: String
    public var token: String
    /// `sandbox` or `production` for APNs; nil for FCM.
    public var environment: String?
    public var bundleID: String
    /// Wall-clock milliseconds of the last registration.
    public var updatedAt: Int64

    public init(
        userGuid: String, deviceId: String, platform: String, token: String, environment: String?,
        bundleID: String, updatedAt: Int64
    ) {
        self.userGuid = userGuid
        self.deviceId = deviceId
        self.platform = platform
        self.token = token
        self.environment = environment
        self.bundleID = bundleID
        self.updatedAt = updatedAt
    }
}

/// What registering a push token came to.
public enum PushRegistration: Sendable, Equatable {
    case registered
    /// The user has no live session on that device.
    case unknownDevice
    /// The user already has the most devices with push tokens allowed.
    case tooManyDevices
}

/// Push tokens per user and device. A device receives only while it has a live session token:
/// that is decided when a push is addressed (``receivingDevices(userGuids:now:)``), so a logout or
/// a revocation stops it at once without touching its push token.
public protocol PushDeviceStore: Sendable {
    /// Records the token of one of the user's devices that has a live session at `now`, taking it
    /// from any other device that held it (a token belongs to one installation); refused past
    /// `maximumPerUser` devices with tokens.
    func register(_ device: PushDeviceRecord, now: Int64, maximumPerUser: Int) async throws
        -> PushRegistration
    /// The user's devices that have a push token, by device id.
    func devices(userGuid: String) async throws -> [PushDeviceRecord]
    /// Forgets a device's push token; false if it had none.
    func unregister(userGuid: String, deviceId: String) async throws -> Bool
    /// The devices of `userGuids` that may receive at `now`: a push token and a live session
    /// token on the same device.
    func receivingDevices(userGuids: [String], now: Int64) async throws -> [PushDeviceRecord]
    /// Forgets a token the provider said is dead (only then); false if no device held it.
    func forget(platform: String, token: String) async throws -> Bool
}
