import RoostCore
import RoostHTTP
import RoostJSON

/// `/ff/push/devices`: a device's push token, registered by the logged-in user on it.
struct PushRoutes: Sendable {
    let devices: PushDevices

    func register(in routes: APIRoutes) {
        // A registration is a few hundred bytes: a large body is refused at its head, unread.
        let small: @Sendable (Request, RequestContext) async throws -> Void = { _, _ in
            throw RoostError(
                status: 413, code: .bodyTooLarge,
                message:
                    "A push token registration is a small JSON object {platform, token, environment, bundleId}."
            )
        }
        routes.loggedIn.on(.put, "/ff/push/devices/:deviceId", admit: small) { request, context in
            let body = try ObjectRoutes.bodyObject(request)
            let device = try await devices.register(
                deviceId: try request.parameters.require("deviceId"), body: body, by: try context.user())
            return Response.json(200, JSONWriter.bytes(PushDevices.json(device)))
        }
        routes.loggedIn.on(.get, "/ff/push/devices") { request, context in
            let items = try await devices.devices(
                ofUser: request.queryParameter("user"), by: try context.user())
            return Response.json(
                200,
                JSONWriter.bytes(
                    .object(
                        JSONObject(uniqueMembers: [
                            (
                                "items",
                                .array(items.map { PushDevices.json($0.device, receiving: $0.receiving) })
                            )
                        ]))))
        }
        routes.loggedIn.on(.delete, "/ff/push/devices/:deviceId") { request, context in
            try await devices.unregister(
                deviceId: try request.parameters.require("deviceId"), ofUser: request.queryParameter("user"),
                by: try context.user())
            return Response(status: 204)
        }
    }
}
