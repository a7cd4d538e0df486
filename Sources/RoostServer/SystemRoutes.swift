import RoostCore
import RoostHTTP
import RoostScripts
import RoostStore

/// `/health` and `/metrics`. The metrics name every script and count every route's answers, so
/// they are served only to administrators (a bearer token) and to the addresses
/// `--metrics-allow` lists (a Prometheus scraper's), checked against the client as the trusted
/// proxies tell it.
struct SystemRoutes: Sendable {
    let metrics: HTTPMetrics
    let storage: any Storage
    let blobStorage: any BlobStorage
    let feed: ChangeFeed
    let scripts: ScriptMetrics
    let asyncHandlers: AsyncHandlerMetrics
    let push: PushMetrics?
    let mail: MailMetrics?
    let authenticator: Authenticator
    let metricsAllowed: TrustedProxies

    func register(in routes: APIRoutes) {
        routes.open.on(.get, "/health") { _, _ in Response.json(200, Array("{\"status\":\"ok\"}".utf8)) }
        routes.open.on(.get, "/metrics") {
            [
                metrics, storage, blobStorage, feed, scripts, asyncHandlers, push, mail, authenticator,
                metricsAllowed
            ]
            request, _ in
            if !metricsAllowed.contains(request.remoteAddress) {
                guard try await authenticator.principal(for: request)?.isAdmin == true else {
                    throw RoostError.metricsNotAllowed
                }
            }
            var headers = HTTPHeaders()
            headers.set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
            var text = metrics.render()
            if !text.hasSuffix("\n") { text += "\n" }
            text += storage.metrics()
            text += blobStorage.metrics()
            text += """
                # HELP roost_event_streams Open realtime event streams (GET /ff/events).
                # TYPE roost_event_streams gauge
                roost_event_streams \(feed.streamCount)

                """
            let scriptLines = scripts.prometheusLines
            if !scriptLines.isEmpty { text += scriptLines.joined(separator: "\n") + "\n" }
            text += asyncHandlers.render()
            // Outbox depths read now, not at the last round: another instance may hold the
            // lease, or nothing may have run since the last write (a failed read keeps the last).
            if let push, let depth = try? await storage.pushStore.queueDepth() { push.setQueueDepth(depth) }
            text += push?.render() ?? ""
            if let mail, let depth = try? await storage.mailStore.queueDepth() { mail.setQueueDepth(depth) }
            text += mail?.render() ?? ""
            return Response(status: 200, headers: headers, body: Array(text.utf8))
        }
    }
}

extension RoostError {
    static let metricsNotAllowed = RoostError(
        status: 403, code: .metricsNotAllowed,
        message:
            "/metrics is served to administrators (Authorization: Bearer <token>) and to the addresses roost serve --metrics-allow lists."
    )
}
