import RoostCore
import RoostHTTP
import RoostScripts
import RoostStore

/// `/health` and `/metrics`.
struct SystemRoutes: Sendable {
    let metrics: HTTPMetrics
    let storage: any Storage
    let blobStorage: any BlobStorage
    let feed: ChangeFeed
    let scripts: ScriptMetrics
    let asyncHandlers: AsyncHandlerMetrics

    func register(in router: inout Router) {
        router.on(.get, "/health") { _ in Response.json(200, Array("{\"status\":\"ok\"}".utf8)) }
        router.on(.get, "/metrics") { [metrics, storage, blobStorage, feed, scripts, asyncHandlers] _ in
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
            return Response(status: 200, headers: headers, body: Array(text.utf8))
        }
    }
}
