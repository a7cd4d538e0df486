import RoostJSON
import RoostStore

/// Devices' push tokens and queued pushes: what `/ff/push` and the scripts' `ff` calls do. A
/// device receives while a live session token exists for its device id (a logout, a revocation
/// or seed 003's single-device login stops it), judged when a push is queued and again when
/// it is sent.
public struct PushService: Sendable {
    /// The most devices one user registers (each one a session's device).
    public static let maximumDevicesPerUser = 50
    /// The most users or devices one push names, or users its query may match.
    public static let maximumTargets = 1000
    /// APNs tokens: hex; 64 characters today, longer ones allowed for the future.
    public static let apnsTokenLengths = 64...200
    public static let maximumFCMTokenBytes = 4096
    public static let maximumBundleIDBytes = 255

    let store: any PushStore
    let accounts: any AccountStore
    let objects: ObjectService
    public let clock: any WallClock
    let guids: any GuidGenerator
    /// Whether a provider is configured: without one, pushes are refused, not queued forever.
    public let isConfigured: Bool
    /// Called after a push is queued (the dispatcher's wake).
    let queued: @Sendable () -> Void

    public init(
        store: any PushStore, accounts: any AccountStore, objects: ObjectService, clock: any WallClock,
        guids: any GuidGenerator, isConfigured: Bool, queued: @escaping @Sendable () -> Void
    ) {
        self.store = store
        self.accounts = accounts
        self.objects = objects
        self.clock = clock
        self.guids = guids
        self.isConfigured = isConfigured
        self.queued = queued
    }

    // MARK: Devices

    /// Stores the token of one of the caller's own devices (a device id one of the caller's live
    /// sessions carries); 404 `device_not_found` for any other, whoever's it is.
    public func register(deviceId: String, body: JSONObject, for principal: Principal) async throws
        -> PushDeviceRecord
    {
        try await requireOwnSession(deviceId: deviceId, principal)
        guard let platformName = body["platform"]?.stringValue,
            let platform = PushPlatform(rawValue: platformName)
        else { throw RoostError.invalidField("platform", "'platform' is \"apns\" or \"fcm\".") }
        guard let token = body["token"]?.stringValue else { throw RoostError.missingField("token") }
        try Self.validate(token: token, platform: platform)
        var environment: String?
        if platform == .apns {
            let named = body["environment"]?.stringValue ?? APNsEnvironment.production.rawValue
            guard APNsEnvironment(rawValue: named) != nil else {
                throw RoostError.invalidField(
                    "environment", "'environment' is \"sandbox\" or \"production\".")
            }
            environment = named
        }
        guard let bundleID = body["bundleId"]?.stringValue ?? body["bundleID"]?.stringValue else {
            throw RoostError.missingField("bundleId")
        }
        guard !bundleID.isEmpty, bundleID.utf8.count <= Self.maximumBundleIDBytes,
            bundleID.unicodeScalars.allSatisfy({ $0.isASCII && $0.value > 32 && $0.value < 127 })
        else {
            throw RoostError.invalidField(
                "bundleId", "'bundleId' is 1 to \(Self.maximumBundleIDBytes) printable ASCII characters.")
        }
        let now = clock.nowMilliseconds()
        do {
            return try await store.register(
                PushDeviceRecord(
                    userGuid: principal.userGuid, deviceId: deviceId, platform: platform.rawValue,
                    token: token,
                    environment: environment, bundleID: bundleID, createdAt: now, updatedAt: now),
                limit: Self.maximumDevicesPerUser)
        } catch PushStoreError.tooManyDevices(let limit) {
            throw RoostError(
                status: 409, code: .tooManyPushDevices,
                message:
                    "A user registers push tokens for at most \(limit) devices; delete one (DELETE /ff/push/devices/{deviceId}) first.",
                details: RoostError.details(["limit": .integer(Int64(limit))]))
        }
    }

    /// The caller's devices, or for an administrator one user's (`user`) or everyone's, paged
    /// by the cursor `after` (`userGuid/deviceId`).
    public func devices(user: String?, after: String?, count: Int, for principal: Principal) async throws
        -> [PushDeviceRecord]
    {
        let owner: String?
        if principal.isAdmin {
            owner = user
        } else {
            guard user == nil || user == principal.userGuid else { throw Self.adminRequired }
            owner = principal.userGuid
        }
        guard (1...1000).contains(count) else {
            throw RoostError.invalidParameter("count", "count is from 1 to 1000.")
        }
        var cursor: (String, String)?
        if let after {
            guard let slash = after.firstIndex(of: "/") else {
                throw RoostError.invalidParameter("after", "after is the 'next' cursor of the previous page.")
            }
            cursor = (String(after[..<slash]), String(after[after.index(after: slash)...]))
        }
        // A user named by something no guid can be has no devices (and PostgreSQL could not look
        // up a name with U+0000).
        if let owner, !ObjectService.isValidGuid(owner) { return [] }
        return try await store.devices(
            userGuid: owner, after: cursor, limit: count, now: clock.nowMilliseconds())
    }

    /// Deletes one of the caller's devices (an administrator: anyone's, naming `user`).
    public func deleteDevice(deviceId: String, user: String?, for principal: Principal) async throws {
        let owner = user ?? principal.userGuid
        guard owner == principal.userGuid || principal.isAdmin else { throw Self.adminRequired }
        guard ObjectService.isValidGuid(owner), !deviceId.unicodeScalars.contains("\u{0}"),
            try await store.deleteDevice(userGuid: owner, deviceId: deviceId)
        else {
            throw Self.deviceNotFound(deviceId)
        }
    }

    /// The cursor of the page after `device`.
    public static func cursor(after device: PushDeviceRecord) -> String {
        device.userGuid + "/" + device.deviceId
    }

    private func requireOwnSession(deviceId: String, _ principal: Principal) async throws {
        guard deviceId != AccountService.unnamedDevice else {
            throw RoostError.invalidParameter(
                "deviceId",
                "Logins that name no device share the device id 'default'; log in with a deviceId to register its push token."
            )
        }
        let now = clock.nowMilliseconds()
        let live = try await accounts.tokens(userGuid: principal.userGuid).contains {
            $0.deviceId == deviceId && $0.expiresAt > now
        }
        guard live else { throw Self.deviceNotFound(deviceId) }
    }

    static func validate(token: String, platform: PushPlatform) throws {
        let valid: Bool
        switch platform {
        case .apns:
            valid =
                apnsTokenLengths.contains(token.utf8.count)
                && token.utf8.allSatisfy {
                    (48...57).contains($0) || (97...102).contains($0) || (65...70).contains($0)
                }
        case .fcm:
            valid =
                (1...maximumFCMTokenBytes).contains(token.utf8.count)
                && token.utf8.allSatisfy { $0 > 32 && $0 < 127 }
        }
        guard valid else {
            throw RoostError(
                status: 400, code: .invalidPushToken,
                message: platform == .apns
                    ? "An APNs device token is \(apnsTokenLengths.lowerBound) to \(apnsTokenLengths.upperBound) hexadecimal digits."
                    : "An FCM registration token is 1 to \(maximumFCMTokenBytes) printable ASCII characters.",
                details: RoostError.details(["platform": .string(platform.rawValue)]))
        }
    }

    static func deviceNotFound(_ deviceId: String) -> RoostError {
        RoostError(
            status: 404, code: .deviceNotFound,
            message:
                "No live session of yours is on device '\(deviceId.prefix(128))', or it has no push token; log in with that deviceId first.",
            details: RoostError.details(["deviceId": .string(String(deviceId.prefix(128)))]))
    }

    public static var adminRequiredError: RoostError { adminRequired }

    static let adminRequired = RoostError(
        status: 403, code: .adminRequired,
        message: "Only an administrator can do this; 'roost users create --admin' makes one.")
}
