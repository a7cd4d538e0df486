import Foundation

/// The access token of a session that refreshes. In memory only: a new launch exchanges the
/// stored refresh token for one.
struct AccessToken: Sendable, Equatable {
    let token: String
    /// When to exchange it ahead of its expiry, by this device's clock.
    let renewAt: Date
    /// When the server stops taking it, by this device's clock (measured from when the request
    /// that issued it was sent, so the clocks' difference does not matter).
    let expiresAt: Date
}

/// Where the refreshing of a session stands.
struct RefreshState {
    var access: AccessToken?
    /// The exchange running now; everyone who needs a new token waits for this one.
    var exchange: Task<ExchangeOutcome, Never>?
    /// The credential store missed the latest rotation (its save failed): saved again before
    /// the refresh token is used.
    var unsaved = false
    /// Exchanges in a row that got no answer, and when the next may run: the wait doubles from
    /// `reconnectDelay` up to `maxReconnectDelay`, as a change stream's does.
    var failures = 0
    var retryAt: Date?

    /// A new session: nothing to wait for.
    mutating func reset(access: AccessToken? = nil) {
        self.access = access
        unsaved = false
        failures = 0
        retryAt = nil
    }
}

/// What a refresh-token exchange came to.
enum ExchangeOutcome: Sendable {
    /// A new pair, stored.
    case renewed
    /// The session changed while the exchange ran (a login or logout): its answer was not used.
    case superseded
    /// The server answered without a pair. Unless the answer is transient (5xx, 429) the session
    /// is over and was forgotten.
    case refused(TransportResponse)
    /// No usable answer came: the session is kept and the exchange runs again later.
    case unreachable(RoostError)
}

/// The token a request goes out with.
enum Bearer {
    case token(String)
    /// No session: the request goes without a token.
    case none
    /// The session could not be renewed; this answer (the exchange's) stands for the request's.
    case refused(TransportResponse)
}

/// A token answer: a login's, registration's, `POST /ff/tokens`' or `POST /ff/refresh`'s.
struct IssuedTokens: Decodable {
    let token: String
    let tokenId: String?
    let id: String?
    let createdAt: Int64?
    let expiresAt: Int64?
    /// Present (with the refresh token) for a session that refreshes.
    let expiresIn: Int64?
    let refreshToken: String?
    let refreshExpiresAt: Int64?

    /// The access token's lifetime in seconds, as the server meant it.
    var lifetime: TimeInterval {
        if let expiresIn { return TimeInterval(expiresIn) }
        if let expiresAt, let createdAt { return TimeInterval(expiresAt - createdAt) / 1000 }
        return 15 * 60
    }
}

extension Roost {
    /// The token requests carry now: the stored one, or a session's access token in memory.
    var currentToken: String? {
        guard let credential else { return nil }
        return credential.refreshes ? refresh.access?.token : credential.token
    }

    /// Keeps a token answer: a plain token in the credential store, or for a session that
    /// refreshes its refresh token there and its access token in memory. `sentAt` is when the
    /// request that got it went out.
    func adopt(_ issued: IssuedTokens, user: RoostUser, sentAt: Date) throws {
        guard let refreshToken = issued.refreshToken else {
            try adopt(
                Credential(token: issued.token, userGuid: user.guid, userName: user.userName), user: user)
            return
        }
        let credential = Credential(
            token: "", userGuid: user.guid, userName: user.userName, refreshToken: refreshToken,
            sessionId: issued.tokenId ?? issued.id, deviceId: deviceId,
            refreshExpiresAt: issued.refreshExpiresAt)
        try adopt(
            credential, user: user, access: accessToken(issued.token, lifetime: issued.lifetime, from: sentAt)
        )
    }

    func accessToken(_ token: String, lifetime: TimeInterval, from start: Date) -> AccessToken {
        let margin = min(configuration.tokenRefreshMargin, lifetime / 2)
        return AccessToken(
            token: token, renewAt: start.addingTimeInterval(lifetime - margin),
            expiresAt: start.addingTimeInterval(lifetime))
    }

    /// The token to send a request with, for `owner` (a queued write's) or whoever is logged
    /// in. A session that refreshes exchanges its refresh token first when its access token is
    /// missing, due for renewal or `stale` (refused as expired). Throws a network error when the
    /// exchange got no answer and no token still works, and ``RoostError/sessionChanged`` when
    /// `owner` is no longer the one logged in.
    func bearer(for owner: String?, replacing stale: String? = nil) async throws -> Bearer {
        var outcome: ExchangeOutcome?
        // Twice at most: a login or logout during the first exchange makes it moot.
        for _ in 0..<2 {
            guard let held = credential else {
                if case .refused(let answer)? = outcome { return .refused(answer) }
                if owner != nil { throw RoostError.sessionChanged }
                return .none
            }
            if let owner, held.userGuid != owner { throw RoostError.sessionChanged }
            guard held.refreshes else { return .token(held.token) }
            let now = configuration.now()
            if let access = refresh.access, access.token != stale {
                // Due for renewal but not expired: it still serves when the exchange cannot run.
                if now < access.renewAt || (outcome != nil && now < access.expiresAt) {
                    return .token(access.token)
                }
            }
            switch outcome {
            case .refused(let answer)?: return .refused(answer)
            case .unreachable(let error)?: throw error
            case .renewed?, .superseded?, nil: outcome = await exchangeOnce()
            }
        }
        if case .refused(let answer)? = outcome { return .refused(answer) }
        if case .unreachable(let error)? = outcome { throw error }
        return currentToken.map(Bearer.token) ?? .none
    }

    /// Runs one exchange at a time: a caller that comes while one runs waits for its outcome.
    func exchangeOnce() async -> ExchangeOutcome {
        if let running = refresh.exchange { return await running.value }
        if let retryAt = refresh.retryAt {
            let wait = retryAt.timeIntervalSince(configuration.now())
            if wait > 0 { return .unreachable(RoostError.refreshBackingOff(wait)) }
        }
        let exchange = Task {
            let outcome = await self.exchangeRefreshToken()
            // Cleared on the actor as the exchange ends, so no later caller joins a finished one.
            self.refresh.exchange = nil
            return outcome
        }
        refresh.exchange = exchange
        return await exchange.value
    }

    /// `POST /ff/refresh` with the session's refresh token. Not cancelled with its caller: a lost
    /// answer would leave the stored token exchanged, and presenting it again ends the session.
    private func exchangeRefreshToken() async -> ExchangeOutcome {
        guard var session = credential, session.refreshes else { return .superseded }
        if refresh.unsaved {
            refresh.unsaved = (try? credentials.save(session)) == nil
        } else if let stored = try? credentials.load(), stored.userGuid == session.userGuid,
            stored.sessionId == session.sessionId, stored.refreshToken != nil
        {
            // Another client on this credential store may have exchanged it since: the store
            // holds the live one.
            session.refreshToken = stored.refreshToken
            session.refreshExpiresAt = stored.refreshExpiresAt
            credential = session
        }
        guard let presented = session.refreshToken,
            let request = try? Self.jsonRequest("POST", "/ff/refresh", body: ["refreshToken": presented])
        else { return .superseded }
        let sentAt = configuration.now()
        let response: TransportResponse
        do {
            response = try await transport.send(request)
        } catch {
            backOff(from: sentAt)
            return .unreachable(error as? RoostError ?? RoostError.refreshUnreachable)
        }
        guard credential?.sessionId == session.sessionId, credential?.refreshToken == presented else {
            return .superseded
        }
        refresh.failures = 0
        refresh.retryAt = nil
        guard response.status == 200 else {
            if RoostError.from(response).isTransient { return .refused(response) }
            // Expired, revoked, or exchanged before (here or by a thief): the session is over.
            forgetCredential()
            return .refused(Self.sessionEnded(by: response))
        }
        guard let issued = try? Wire.decode(IssuedTokens.self, from: response.body),
            let next = issued.refreshToken
        else {
            // Not Roost's answer (a proxy's page, say): the token may still be live; try later.
            backOff(from: sentAt)
            return .unreachable(RoostError.from(response))
        }
        session.refreshToken = next
        session.refreshExpiresAt = issued.refreshExpiresAt
        session.sessionId = issued.tokenId ?? session.sessionId
        // Stored before anything uses the new pair: the server has already killed the old
        // refresh token, so the store must never fall back to it. The write is atomic (old or new
        // file, never a torn one). If it fails the pair is kept in memory and saved again before
        // the next exchange.
        refresh.unsaved = (try? credentials.save(session)) == nil
        credential = session
        refresh.access = accessToken(issued.token, lifetime: issued.lifetime, from: sentAt)
        return .renewed
    }

    /// The refusal as the 401 it means for the request that waited: any other status (a server
    /// without `/ff/refresh` answers 404) would make the queue drop or settle a write.
    static func sessionEnded(by refusal: TransportResponse) -> TransportResponse {
        guard refusal.status != 401 else { return refusal }
        let body: JSON = [
            "status": 401, "code": .string(ErrorCode.invalidRefreshToken.rawValue),
            "message": .string(
                "The server refused the refresh token (HTTP \(refusal.status)); log in again."),
            "details": ["exchangeStatus": .number(Double(refusal.status))],
        ]
        return TransportResponse(
            status: 401, headers: ["Content-Type": "application/json"],
            body: (try? Wire.encoder.encode(body)) ?? Data())
    }

    private func backOff(from start: Date) {
        refresh.failures += 1
        let doubled = configuration.reconnectDelay * Double(1 << min(refresh.failures - 1, 16))
        refresh.retryAt = start.addingTimeInterval(min(doubled, configuration.maxReconnectDelay))
    }
}

extension RoostError {
    static func refreshBackingOff(_ seconds: TimeInterval) -> RoostError {
        RoostError(
            status: nil, code: Code.networkUnreachable,
            message:
                "The session could not be renewed: the server could not be reached. The next try is in \(Int(seconds.rounded(.up))) s.",
            details: ["retryAfter": .number(seconds.rounded(.up))])
    }

    static let refreshUnreachable = RoostError(
        status: nil, code: Code.networkUnreachable,
        message: "The session could not be renewed: the server cannot be reached. It is tried again later.")
}
