import Foundation

/// The push provider a device token comes from.
public enum PushPlatform: String, Codable, Sendable {
    /// Apple Push Notification service (iOS, iPadOS, macOS, watchOS, visionOS).
    case apns
    /// Firebase Cloud Messaging (Android, and iOS apps that use Firebase).
    case fcm
}

/// Which APNs gateway a token is valid on: development builds get sandbox tokens.
public enum APNsEnvironment: String, Codable, Sendable {
    case sandbox
    case production
}

/// A device's push token as the server keeps it.
public struct PushDevice: Codable, Sendable, Equatable {
    public let userGuid: String
    public let deviceId: String
    public let platform: PushPlatform
    /// The token's last 8 characters: the server never gives a token back whole.
    public let tokenSuffix: String
    public let environment: APNsEnvironment?
    public let bundleId: String
    /// Milliseconds since 1970.
    public let createdAt: Int64
    public let updatedAt: Int64
    /// In ``Roost/pushDevices()``: whether a push reaches it now, only while a session on the
    /// device is live (nil in a registration's answer).
    public let receiving: Bool?
}

extension Roost {
    /// Registers this device's push token (`PUT /ff/push/devices/{deviceId}`) for the logged-in
    /// user, bound to ``deviceId``: a logout, or a login elsewhere under a one-device policy,
    /// stops its pushes. `token` is the APNs device token's bytes (as
    /// `didRegisterForRemoteNotificationsWithDeviceToken` gives them), sent as hex.
    @discardableResult
    public func registerPushToken(
        _ token: Data, environment: APNsEnvironment, bundleID: String? = Bundle.main.bundleIdentifier
    ) async throws -> PushDevice {
        try await registerPushToken(
            token.map { String(format: "%02x", $0) }.joined(), platform: .apns, environment: environment,
            bundleID: bundleID)
    }

    /// Registers a push token given as text (an FCM registration token, or APNs hex).
    @discardableResult
    public func registerPushToken(
        _ token: String, platform: PushPlatform, environment: APNsEnvironment? = nil,
        bundleID: String? = Bundle.main.bundleIdentifier
    ) async throws -> PushDevice {
        struct Registration: Encodable {
            let platform: PushPlatform
            let token: String
            let environment: APNsEnvironment?
            let bundleId: String?
        }
        let response = try await perform(
            try Self.jsonRequest(
                "PUT", "/ff/push/devices/\(Self.pathSegment(deviceId))",
                body: Registration(
                    platform: platform, token: token, environment: environment, bundleId: bundleID)),
            retryingAfterLogin: false)
        return try Wire.decode(PushDevice.self, from: response.body)
    }

    /// Forgets this device's push token on the server (`DELETE /ff/push/devices/{deviceId}`).
    public func unregisterPushToken() async throws {
        _ = try await perform(
            TransportRequest(method: "DELETE", path: "/ff/push/devices/\(Self.pathSegment(deviceId))"),
            retryingAfterLogin: false)
    }

    /// The logged-in user's devices with push tokens.
    public func pushDevices() async throws -> [PushDevice] {
        struct Page: Decodable { let items: [PushDevice] }
        let response = try await perform(
            TransportRequest(method: "GET", path: "/ff/push/devices"), retryingAfterLogin: false)
        return try Wire.decode(Page.self, from: response.body).items
    }
}
