import Foundation

/// Follows one subscription: connects, turns events into ``ObjectChange``s, and after a drop
/// reconnects with backoff from the last position it handed over, until the consumer stops or
/// an error that a retry cannot fix.
struct ChangeFollower<Model: RoostModel>: Sendable {
    let client: Roost
    let subscription: ChangeSubscription
    let continuation: ObjectChanges<Model>.Continuation
    /// The last position handed to the consumer (or heard in a heartbeat): where a reconnect resumes.
    var position: Int64?

    /// How a connection ended without an error.
    enum Ending {
        /// The consumer stopped iterating.
        case consumerGone
        /// The connection dropped, or the server ended it (shutdown, a slow reader).
        case dropped
        /// The consumer's buffer is full: reconnect once it has read some.
        case bufferFull
        /// The server ended it because the token or account is no longer good: the reconnect
        /// is refused, and that refusal is the error the consumer sees.
        case authorizationEnded
    }

    func run() async {
        var follower = self
        do {
            try await follower.follow()
            continuation.finish()
        } catch {
            continuation.finish(throwing: error)
        }
    }

    private mutating func follow() async throws {
        var owner = await client.credentialOwner
        var failures = 0
        var retriedAfterAuthorizationEnded = false
        var askedForLogin = false
        while !Task.isCancelled {
            let current = await client.credentialOwner
            if current != owner {
                // A stream opened anonymously follows whoever logs in; a user's stream ends
                // with that user's session.
                guard owner == nil else { throw RoostError.sessionChanged }
                owner = current
            }
            var request = TransportRequest(
                method: "GET", path: subscription.path, headers: ["Accept": "text/event-stream"])
            if let position { request.headers["Last-Event-ID"] = String(position) }
            let ending: Ending
            do {
                let stream = try await client.openStream(request)
                askedForLogin = false
                ending = try await read(stream, failures: &failures)
            } catch let error as RoostError {
                if Task.isCancelled { return }
                // Asked once per refusal, as for any request: a handler that logs nobody in
                // must not make a loop.
                if error.needsLogin, !askedForLogin, await client.loginAgain(after: error) {
                    askedForLogin = true
                    continue
                }
                guard error.isTransient else { throw error }
                failures += 1
                try await pause(failures)
                continue
            }
            switch ending {
            case .consumerGone: return
            case .authorizationEnded where !retriedAfterAuthorizationEnded:
                // Straight back, once: the server's refusal says what ended it.
                retriedAfterAuthorizationEnded = true
            case .dropped, .bufferFull, .authorizationEnded:
                failures += 1
                try await pause(failures)
            }
        }
    }

    /// Reads one connection until it ends; network failures while reading count as a drop.
    private mutating func read(_ stream: TransportStream, failures: inout Int) async throws -> Ending {
        defer { stream.close() }
        var parser = ServerSentEventParser()
        var authorizationEnded = false
        do {
            for try await chunk in stream.body {
                for output in try parser.feed(chunk) {
                    switch output {
                    case .comment(let text):
                        if Self.endsAuthorization(text) { authorizationEnded = true }
                    case .event(let event):
                        // Only events with a position count; the feed gives every one an id.
                        guard let id = event.id.flatMap({ Int64($0) }) else { continue }
                        if let change = try Self.change(from: event, position: id) {
                            switch continuation.yield(change) {
                            case .enqueued: break
                            case .dropped: return .bufferFull
                            case .terminated: return .consumerGone
                            @unknown default: return .consumerGone
                            }
                        }
                        position = id
                        failures = 0
                    }
                }
            }
        } catch let error as RoostError where error.isTransient && !error.isFromServer {
            // The connection broke mid-stream: resume like after any drop.
        }
        if Task.isCancelled { return .consumerGone }
        return authorizationEnded ? .authorizationEnded : .dropped
    }

    /// Waits before the next attempt: doubling from the configured delay up to its ceiling,
    /// with jitter so clients dropped together do not come back together.
    private func pause(_ failures: Int) async throws {
        let base = client.configuration.reconnectDelay
        let ceiling = client.configuration.maxReconnectDelay
        let doubled = base * Double(1 << min(failures - 1, 16))
        let delay = min(doubled, ceiling) * Double.random(in: 0.5...1)
        try? await Task.sleep(nanoseconds: UInt64(delay * 1_000_000_000))
        if Task.isCancelled { throw CancellationError() }
    }

    /// The server's last words before it ends a stream whose token or account is no longer good.
    static func endsAuthorization(_ comment: String) -> Bool {
        comment.contains("log in again") || comment.contains("no longer active")
    }

    /// The change an event reports; nil for event types this SDK does not know.
    static func change(from event: ServerSentEvent, position: Int64) throws -> ObjectChange<Model>? {
        let kind: ObjectChange<Model>.Kind
        switch event.type {
        case "create": kind = .created(try object(event.data))
        case "update": kind = .updated(try object(event.data))
        case "enter": kind = .entered(try object(event.data))
        case "leave": kind = .left(guid: try reference(event.data))
        case "delete": kind = .deleted(guid: try reference(event.data))
        case "reset": kind = .reset
        default: return nil
        }
        return ObjectChange(kind: kind, position: position)
    }

    private static func object(_ data: String) throws -> Stored<Model> {
        let bytes = Data(data.utf8)
        do {
            return try Wire.decoder.decode(Stored<Model>.self, from: bytes)
        } catch {
            let guid = (try? JSONDecoder().decode(JSON.self, from: bytes))?["guid"]?.stringValue
            throw RoostError.undecodable(
                UndecodableObject(
                    collection: Model.collection, guid: guid ?? "?", field: RoostError.field(of: error),
                    reason: RoostError.summary(of: error)))
        }
    }

    private static func reference(_ data: String) throws -> String {
        guard let guid = (try? JSONDecoder().decode(JSON.self, from: Data(data.utf8)))?["guid"]?.stringValue
        else {
            throw RoostError(
                status: nil, code: RoostError.Code.invalidResponse,
                message: "A change event of \(Model.collection) names no object.")
        }
        return guid
    }
}

extension Roost {
    /// The user the held token belongs to; a change stream ends when it changes.
    var credentialOwner: String? { credential?.userGuid }

    /// Opens an event stream with the current token; an error answer is thrown as its
    /// ``RoostError`` (a refused token is forgotten, and an expired access token renewed once,
    /// as for any request).
    func openStream(_ request: TransportRequest) async throws -> TransportStream {
        var sent: String?
        switch try await bearer(for: nil) {
        case .none: sent = nil
        case .refused(let answer): throw RoostError.from(answer)
        case .token(let token): sent = token
        }
        var opened = try await attemptStream(request, token: sent)
        if case .failure(let error) = opened, error.status == 401, let token = sent,
            renews(token, refusedWith: error)
        {
            switch try await bearer(for: nil, replacing: sent) {
            case .none: break
            case .refused(let answer): throw RoostError.from(answer)
            case .token(let token):
                sent = token
                opened = try await attemptStream(request, token: token)
            }
        }
        switch opened {
        case .success(let stream): return stream
        case .failure(let error):
            if error.status == 401, let sent, sent == currentToken, ends(error) {
                forgetCredential()
            }
            throw error
        }
    }

    /// The stream, or the error its answer carries.
    private func attemptStream(_ request: TransportRequest, token: String?) async throws
        -> Result<TransportStream, RoostError>
    {
        let stream = try await transport.stream(token.map { authorized(request, with: $0) } ?? request)
        guard stream.status >= 300 else { return .success(stream) }
        defer { stream.close() }
        var body = Data()
        for try await chunk in stream.body {
            body += chunk
            // Error bodies are small JSON; a stream that is not one is not read further.
            if body.count > 64 * 1024 { break }
        }
        return .failure(
            RoostError.from(TransportResponse(status: stream.status, headers: stream.headers, body: body)))
    }

    /// Asks the login handler to log someone in after `error`; true when it did.
    func loginAgain(after error: RoostError) async -> Bool {
        guard let loginHandler else { return false }
        return await loginHandler(error)
    }
}

extension RoostError {
    /// A change stream opened for one user outlived that user's session on this client.
    static let sessionChanged = RoostError(
        status: nil, code: Code.notLoggedIn,
        message:
            "The user this change stream was opened for logged out or another user logged in; open the stream again after logging in."
    )
}
