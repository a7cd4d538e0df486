import Foundation
import RoostCore
import RoostHTTP
import RoostJSON
import RoostStore

/// Push: who sends and how (`roost serve`'s provider options compose the sender; see
/// `RoostDrivers`). Without a sender, `POST /ff/push` answers 503 `push_not_configured`;
/// devices still register, so apps need not know.
public struct PushOptions: Sendable {
    /// Delivers to APNs and FCM; nil: push is not configured.
    public var sender: (any PushSender)?
    public var dispatch = PushDispatchOptions()
    /// What `roost serve` was told of the providers, from which the program composing the server
    /// makes ``sender`` (see `StandardDrivers.pushSender(for:)`).
    public var providers = PushProviderSettings()

    public init() {}
}

/// The providers' credentials and addresses (`--apns-*`, `--fcm-*`). Keys are read from files,
/// never given on the command line, and never logged.
public struct PushProviderSettings: Sendable, Equatable {
    /// APNs token authentication: the `.p8` key's file, its key id and the team id.
    public var apnsKeyFile: String?
    public var apnsKeyID: String?
    public var apnsTeamID: String?
    /// The gateways, settings so tests point them at a local fake.
    public var apnsProductionURL = "https://api.push.apple.com"
    public var apnsSandboxURL = "https://api.sandbox.push.apple.com"
    /// FCM HTTP v1: the service account's JSON file.
    public var fcmServiceAccountFile: String?
    public var fcmBaseURL = "https://fcm.googleapis.com"
    /// PEM certificates trusted for the gateways instead of the system's (nil: the system's).
    public var caFile: String?

    public init() {}

    /// Whether APNs is configured.
    public var hasAPNs: Bool { apnsKeyFile != nil }
    /// Whether FCM is configured.
    public var hasFCM: Bool { fcmServiceAccountFile != nil }

    /// Why these settings cannot work, or nil: APNs needs its key, key id and team id together.
    public var problem: String? {
        let apns = [apnsKeyFile, apnsKeyID, apnsTeamID]
        if apns.contains(where: { $0 != nil }) && apns.contains(where: { $0 == nil }) {
            return "--apns-key-file, --apns-key-id and --apns-team-id go together; give all three"
        }
        for (flag, path) in [
            ("--apns-key-file", apnsKeyFile), ("--fcm-service-account", fcmServiceAccountFile),
            ("--push-ca-file", caFile),
        ] {
            if let path, access(path, R_OK) != 0 { return "\(flag): cannot read \(path)" }
        }
        for (flag, url) in [
            ("--apns-url", apnsProductionURL), ("--apns-sandbox-url", apnsSandboxURL),
            ("--fcm-url", fcmBaseURL),
        ] where !(url.hasPrefix("https://") || url.hasPrefix("http://")) {
            return "\(flag) takes an http(s) URL, not '\(url.prefix(80))'"
        }
        return nil
    }
}

/// `/ff/push/devices` (a user's own devices; administrators see all) and `POST /ff/push`
/// (administrators).
struct PushRoutes: Sendable {
    let service: PushService

    func register(in routes: APIRoutes) {
        routes.loggedIn.on(.put, "/ff/push/devices/:deviceId") { request, context in
            let device = try await service.register(
                deviceId: try request.parameters.require("deviceId"),
                body: try ObjectRoutes.bodyObject(request),
                for: try context.user())
            return Response.json(200, JSONWriter.bytes(.object(Self.describe(device))))
        }
        routes.loggedIn.on(.get, "/ff/push/devices") { request, context in
            let count = try ObjectRoutes.integerParameter(request, "count", default: 100)
            let devices = try await service.devices(
                user: request.queryParameter("user"), after: request.queryParameter("after"), count: count,
                for: try context.user())
            let next: JSONValue =
                devices.count == count
                ? .string(PushService.cursor(after: devices[devices.count - 1])) : .null
            return Response.json(
                200,
                JSONWriter.bytes(
                    .object(
                        JSONObject(uniqueMembers: [
                            ("items", .array(devices.map { .object(Self.describe($0)) })), ("next", next),
                        ]))))
        }
        routes.loggedIn.on(.delete, "/ff/push/devices/:deviceId") { request, context in
            try await service.deleteDevice(
                deviceId: try request.parameters.require("deviceId"), user: request.queryParameter("user"),
                for: try context.user())
            return Response(status: 204)
        }
        routes.loggedIn.on(.post, "/ff/push") { request, context in
            let principal = try context.user()
            // Refused before the body is read: who may send, and whether anything can.
            guard principal.isAdmin else { throw PushService.adminRequiredError }
            let (id, devices) = try await service.send(try ObjectRoutes.bodyObject(request), by: principal)
            var response = Response.json(
                202,
                JSONWriter.bytes(
                    .object(
                        JSONObject(uniqueMembers: [
                            ("id", .string(id)), ("devices", .integer(Int64(devices))),
                        ]))))
            response.headers.set("Location", "/ff/push/\(id)")
            return response
        }
        routes.loggedIn.on(.get, "/ff/push/:id") { request, context in
            let count = try ObjectRoutes.integerParameter(request, "count", default: 100)
            guard (1...1000).contains(count) else {
                throw RoostError.invalidParameter("count", "count is from 1 to 1000.")
            }
            let status = try await service.status(
                id: try request.parameters.require("id"), limit: count, by: try context.user())
            return Response.json(200, JSONWriter.bytes(.object(Self.describe(status))))
        }
    }

    /// A device without its full token: its last 8 characters tell tokens apart.
    static func describe(_ device: PushDeviceRecord) -> JSONObject {
        JSONObject(
            uniqueMembers: [
                ("userGuid", .string(device.userGuid)), ("deviceId", .string(device.deviceId)),
                ("platform", .string(device.platform)),
                ("environment", device.environment.map(JSONValue.string) ?? .null),
                ("bundleId", .string(device.bundleID)),
                ("tokenSuffix", .string(String(device.token.suffix(8)))),
                ("createdAt", .integer(device.createdAt)), ("updatedAt", .integer(device.updatedAt)),
            ] + (device.receiving.map { [("receiving", JSONValue.bool($0))] } ?? []))
    }

    static func describe(_ status: PushStatus) -> JSONObject {
        JSONObject(uniqueMembers: [
            ("id", .string(status.id)), ("createdAt", .integer(status.createdAt)),
            ("createdBy", status.createdBy.map(JSONValue.string) ?? .null),
            ("devices", .integer(Int64(status.targeted))),
            (
                "deliveries",
                .array(
                    status.deliveries.map { delivery in
                        .object(
                            JSONObject(uniqueMembers: [
                                ("userGuid", .string(delivery.userGuid)),
                                ("deviceId", .string(delivery.deviceId)),
                                ("state", .string(delivery.state.rawValue)),
                                ("attempts", .integer(Int64(delivery.attempts))),
                                ("error", delivery.error.map(JSONValue.string) ?? .null),
                                ("providerId", delivery.providerID.map(JSONValue.string) ?? .null),
                                ("updatedAt", .integer(delivery.updatedAt)),
                            ]))
                    })
            ),
        ])
    }
}
