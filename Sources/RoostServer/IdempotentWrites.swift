import RoostCore
import RoostHTTP
import RoostStore

/// Runs a write once per `Idempotency-Key` and replays its response for repeats.
///
/// Client errors (4xx) are recorded and replayed like successes, since running the request again
/// would fail the same way; a 5xx forgets the key so a retry runs again.
struct IdempotentWrites: Sendable {
    static let header = "Idempotency-Key"
    /// Headers that describe the result, worth replaying; others belong to the moment.
    static let replayedHeaders = ["Content-Type", "ETag", "Location", "Cache-Control", "Retry-After"]

    let service: IdempotencyService

    func respond(
        to request: Request, principal: Principal?,
        _ handler: @Sendable (Request, Principal?, IdempotencyMark?) async throws -> Response
    ) async throws -> Response {
        guard let key = request.headers[Self.header] else {
            return try await handler(request, principal, nil)
        }
        // A streamed body is known by its digest: two uploads differ when their bytes do.
        let decision = try await service.begin(
            key: key, caller: principal, clientAddress: request.remoteAddress,
            method: request.method.rawValue,
            target: request.target,
            body: request.body + (request.streamedBody?.digest ?? []))
        switch decision {
        case .replay(let recorded):
            var response = Response(status: recorded.status, body: recorded.body)
            for (name, value) in recorded.headers { response.headers.set(name, value) }
            response.headers.set("Idempotent-Replayed", "true")
            return response
        case .run(let ticket):
            let response: Response
            do {
                response = try await handler(request, principal, ticket.mark)
            } catch {
                let failure = ErrorBoundary.quietResponse(for: error, request: request)
                guard failure.status < 500 else {
                    await service.abandon(ticket)
                    throw error
                }
                response = failure
            }
            let kept = Self.replayedHeaders.compactMap { name in response.headers[name].map { (name, $0) } }
            try await service.finish(
                ticket, with: RecordedResponse(status: response.status, headers: kept, body: response.body))
            return response
        }
    }
}
