import Foundation
import RoostCore
import RoostHTTP

/// `GET /ff/events`: the realtime change feed as Server-Sent Events (see docs/realtime.md).
struct EventRoutes: Sendable {
    let feed: ChangeFeed

    func register(in routes: APIRoutes) {
        routes.api.on(.get, "/ff/events") { [feed] request, context in
            let principal = context.principal
            let subscriptions = try Self.subscriptions(in: request)
            let resumeAfter = try Self.position(in: request)
            let stream = ResponseStream(bufferLimit: feed.limits.bufferedBytes)
            try await feed.open(
                subscriptions, caller: principal, client: clientKey(forAddress: request.remoteAddress),
                resumeAfter: resumeAfter,
                sink: StreamSink(stream: stream))
            var headers = HTTPHeaders()
            headers.set("Content-Type", "text/event-stream; charset=utf-8")
            headers.set("Cache-Control", "no-store")
            // nginx would otherwise hold the events back in its buffer.
            headers.set("X-Accel-Buffering", "no")
            var response = Response(status: 200, headers: headers)
            response.stream = stream
            return response
        }
    }

    /// Each `subscribe=Collection[/guid|/(query)]`, and the one `collection` (with `guid` or
    /// `query`) names.
    static func subscriptions(in request: Request) throws -> [EventSubscription] {
        var subscriptions: [EventSubscription] = []
        var single = EventSubscription(collection: "")
        for (name, value) in queryPairs(request) {
            switch name {
            case "subscribe": subscriptions.append(try EventSubscription.parse(value))
            case "collection": single.collection = value
            case "guid": single.guid = value
            case "query": single.query = value
            default: break
            }
        }
        if !single.collection.isEmpty {
            subscriptions.insert(single, at: 0)
        } else if single.guid != nil || single.query != nil {
            throw RoostError.invalidParameter("collection", "'guid' and 'query' need a 'collection'.")
        }
        return subscriptions
    }

    /// Where the client resumes: `Last-Event-ID` (which an EventSource sends when it reconnects),
    /// else `?since=`; nil for a new stream, which starts at the end of the log.
    static func position(in request: Request) throws -> Int64? {
        let header = request.headers["Last-Event-ID"].flatMap { $0.isEmpty ? nil : $0 }
        guard let text = header ?? request.queryParameter("since") else { return nil }
        guard let position = Int64(text.trimmingCharacters(in: .whitespaces)), position >= 0 else {
            throw RoostError.invalidParameter(
                header != nil ? "Last-Event-ID" : "since",
                "A position is the id of an event: a whole number, 0 or more.")
        }
        return position
    }

    private static func queryPairs(_ request: Request) -> [(String, String)] {
        guard let query = request.query else { return [] }
        return query.split(separator: "&", omittingEmptySubsequences: true).compactMap { pair in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard let name = PercentEncoding.decode(parts[0], plusAsSpace: true) else { return nil }
            return (name, parts.count > 1 ? PercentEncoding.decode(parts[1], plusAsSpace: true) ?? "" : "")
        }
    }
}

/// A streamed response as the feed's sink.
final class StreamSink: EventSink {
    let stream: ResponseStream

    init(stream: ResponseStream) {
        self.stream = stream
    }

    func send(_ bytes: [UInt8], farewell: [UInt8]) -> Bool {
        stream.send(bytes, farewell: farewell) == .queued
    }

    func finish(_ bytes: [UInt8]) { stream.finish(bytes) }

    func onEnd(_ handler: @escaping @Sendable () -> Void) { stream.onEnd(handler) }

    var isBackedUp: Bool { stream.isBackedUp }

    var bytesTaken: Int { stream.bytesTaken }

    func send(_ event: EventBytes, farewell: [UInt8], unlessBackedUp batch: EventBatch) -> EventSendOutcome {
        let writes = batch.part(StreamWrites.init).writes
        switch stream.send(
            event.bytes, shared: event, farewell: farewell, batch: writes, unlessBackedUp: true)
        {
        case .queued: return .sent
        case .backedUp: return .backedUp
        case .overLimit, .ended: return .ended
        }
    }

    func cut() -> Bool { stream.cut() }

    func finish(_ bytes: [UInt8], after batch: EventBatch) {
        stream.finish(bytes, batch: batch.part(StreamWrites.init).writes)
    }
}

/// The fan-out's writes to streamed responses, one job per event loop.
private final class StreamWrites: EventBatchPart {
    let writes = StreamWriteBatch()

    func flush() { writes.flush() }
}
