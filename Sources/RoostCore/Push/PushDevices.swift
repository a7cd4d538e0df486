import RoostErrorCodes
import RoostJSON
import RoostStore

/// Push tokens of users' devices: validated here, stored beside the device's sessions. A device
/// receives only while a session on it is live, so a logout or a revocation (one active device,
/// as seed 003 wants) stops its pushes at once.
public struct PushDevices: Sendable {
    /// The most devices with a push token one user may have.
    public static let maximumDevicesPerUser = 50
    /// The longest device id, bundle id and FCM token accepted.
    public static let maximumDeviceIDLength = 128
    public static let maximumBundleIDLength = 255
    public static let maximumFCMTokenLength = 4096
    /// APNs tokens are hex: 32 bytes today, up to 100 allowed for the future.
    public static let apnsTokenLengths = 64...200

    let store: any PushDeviceStore
    let clock: any WallClock

    public init(store: any PushDeviceStore, clock: any WallClock = SystemWallClock()) {
        self.store = store
        self.clock = clock
    }

    /// Records the push token in `body` (`platform`, `token`, `environment` for APNs, `bundleId`)
    /// for one of the caller's own devices.
    public func register(deviceId: String, body: JSONObject, by principal: Principal) async throws
        -> PushDeviceRecord
    {
        let device = try Self.record(
            userGuid: principal.userGuid, deviceId: deviceId, body: body, now: clock.nowMilliseconds())
        switch try await store.register(
            device, now: device.updatedAt, maximumPerUser: Self.maximumDevicesPerUser)
        {
        case .registered:
            return device
        case .unknownDevice:
            throw Self.deviceNotFound(deviceId)
        case .tooManyDevices:
            throw RoostError(
                status: 409, code: .tooManyPushDevices,
                message:
                    "You have \(Self.maximumDevicesPerUser) devices with push tokens already; unregister one (DELETE /ff/push/devices/{deviceId}) first.",
                details: RoostError.details(["limit": .number(String(Self.maximumDevicesPerUser))]))
        }
    }

    /// The devices with push tokens of `userGuid` (an administrator's choice) or of the caller,
    /// each with whether it receives now (a live session on it).
    public func devices(ofUser userGuid: String?, by principal: Principal) async throws
        -> [(device: PushDeviceRecord, receiving: Bool)]
    {
        let owner = try Self.owner(userGuid, principal)
        let devices = try await store.devices(userGuid: owner)
        let receiving = Set(
            try await store.receivingDevices(userGuids: [owner], now: clock.nowMilliseconds()).map(\.deviceId)
        )
        return devices.map { ($0, receiving.contains($0.deviceId)) }
    }

    /// Forgets the push token of one device of the caller's (or, for an administrator, anyone's).
    public func unregister(deviceId: String, ofUser userGuid: String?, by principal: Principal) async throws {
        guard try await store.unregister(userGuid: try Self.owner(userGuid, principal), deviceId: deviceId)
        else {
            throw Self.deviceNotFound(deviceId)
        }
    }

    /// The devices of `userGuids` that may receive now.
    public func receiving(userGuids: [String]) async throws -> [PushDeviceRecord] {
        try await store.receivingDevices(userGuids: userGuids, now: clock.nowMilliseconds())
    }

    /// The device as answers show it (the token is the caller's own, so it is shown);
    /// `receiving`: whether a push would reach it now.
    public static func json(_ device: PushDeviceRecord, receiving: Bool = true) -> JSONValue {
        var members: [(String, JSONValue)] = [
            ("deviceId", .string(device.deviceId)), ("platform", .string(device.platform)),
            ("token", .string(device.token)),
        ]
        if let environment = device.environment { members.append(("environment", .string(environment))) }
        members += [
            ("bundleId", .string(device.bundleID)), ("updatedAt", .number(String(device.updatedAt))),
            ("receiving", .bool(receiving)),
        ]
        return .object(JSONObject(uniqueMembers: members))
    }

    private static func owner(_ userGuid: String?, _ principal: Principal) throws -> String {
        guard let userGuid, userGuid != principal.userGuid else { return principal.userGuid }
        try AccountService.requireAdmin(principal)
        return userGuid
    }

    private static func deviceNotFound(_ deviceId: String) -> RoostError {
        RoostError(
            status: 404, code: .deviceNotFound,
            message:
                "You have no session on device '\(deviceId.prefix(maximumDeviceIDLength))' (or it has no push token); log in on that device with its deviceId first.",
            details: RoostError.details(["deviceId": .string(String(deviceId.prefix(maximumDeviceIDLength)))])
        )
    }

    static func record(userGuid: String, deviceId: String, body: JSONObject, now: Int64) throws
        -> PushDeviceRecord
    {
        guard (1...maximumDeviceIDLength).contains(deviceId.utf8.count) else {
            throw RoostError.invalidParameter(
                "deviceId", "A device id is 1 to \(maximumDeviceIDLength) bytes: the deviceId given at login."
            )
        }
        guard let platformName = body["platform"]?.stringValue else {
            throw RoostError.missingField("platform")
        }
        guard let platform = PushPlatform(rawValue: platformName) else {
            throw RoostError.invalidField("platform", "platform must be 'apns' or 'fcm'.")
        }
        guard let token = body["token"]?.stringValue else { throw RoostError.missingField("token") }
        var environment: String?
        switch platform {
        case .apns:
            guard apnsTokenLengths.contains(token.utf8.count), token.utf8.allSatisfy(\.isHexDigit) else {
                throw RoostError.invalidField(
                    "token",
                    "An APNs token is \(apnsTokenLengths.lowerBound) to \(apnsTokenLengths.upperBound) hex digits."
                )
            }
            guard let name = body["environment"]?.stringValue else {
                throw RoostError.missingField("environment")
            }
            guard APNsEnvironment(rawValue: name) != nil else {
                throw RoostError.invalidField(
                    "environment", "environment must be 'sandbox' (development builds) or 'production'.")
            }
            environment = name
        case .fcm:
            guard (1...maximumFCMTokenLength).contains(token.utf8.count),
                token.utf8.allSatisfy({ (0x21...0x7e).contains($0) })
            else {
                throw RoostError.invalidField(
                    "token", "An FCM token is 1 to \(maximumFCMTokenLength) visible ASCII characters.")
            }
            guard body["environment"] == nil || body["environment"] == .null else {
                throw RoostError.invalidField("environment", "environment is for APNs tokens only.")
            }
        }
        guard let bundleID = body["bundleId"]?.stringValue else { throw RoostError.missingField("bundleId") }
        guard (1...maximumBundleIDLength).contains(bundleID.utf8.count),
            bundleID.utf8.allSatisfy({ $0.isBundleCharacter })
        else {
            throw RoostError.invalidField(
                "bundleId",
                "bundleId is the app's bundle id or package name: 1 to \(maximumBundleIDLength) letters, digits, '.', '-' or '_'."
            )
        }
        return PushDeviceRecord(
            userGuid: userGuid, deviceId: deviceId, platform: platform.rawValue, token: token,
            environment: environment, bundleID: bundleID, updatedAt: now)
    }
}

extension UInt8 {
    fileprivate var isHexDigit: Bool {
        (0x30...0x39).contains(self) || (0x41...0x46).contains(self) || (0x61...0x66).contains(self)
    }

    fileprivate var isBundleCharacter: Bool {
        (0x30...0x39).contains(self) || (0x41...0x5a).contains(self) || (0x61...0x7a).contains(self)
            || self == 0x2e || self == 0x2d || self == 0x5f
    }
}
