import Foundation
import RoostCore
import RoostJSON
import Synchronization

/// How to reach FCM HTTP v1 with a service account.
public struct FCMConfiguration: Sendable {
    /// The service-account JSON Firebase's console gives (Project settings, Service accounts);
    /// read once, its key never logged.
    public var serviceAccountFile: String
    public var baseURL = "https://fcm.googleapis.com"
    /// An access token is refreshed this long before Google says it expires.
    public var refreshMarginSeconds: Int64 = 5 * 60
    public var requestTimeoutMilliseconds = 10_000
    public var maximumPending = 1000
    /// A CA bundle to trust instead of the system's (tests).
    public var caFile: String?

    public init(serviceAccountFile: String) { self.serviceAccountFile = serviceAccountFile }
}

/// Sends through FCM HTTP v1: an RS256 assertion signed with the service account's key is
/// exchanged at its `token_uri` for an OAuth2 access token, which every send shares until a few
/// minutes before it expires.
public final class FCMSender: PushSender {
    private enum TokenState {
        case none
        /// One send fetches; the others wait for its result.
        case fetching([CheckedContinuation<Result<String, Failure>, Never>])
        case ready(token: String, refreshAt: Int64)
    }
    private struct Failure: Error {
        var outcome: PushOutcome
    }

    /// What the service-account file says.
    struct ServiceAccount {
        var projectID: String
        var clientEmail: String
        var tokenURI: String
        var key: SigningKey

        init(file: String) throws(PushConfigurationError) {
            let account: JSONObject
            do {
                let text = try String(contentsOfFile: file, encoding: .utf8)
                guard let object = try JSONParser.parse(text).objectValue else {
                    throw PushConfigurationError("")
                }
                account = object
            } catch {
                throw PushConfigurationError(
                    "cannot read the FCM service account file \(file) as JSON (Firebase console, Project settings, Service accounts, Generate new private key)"
                )
            }
            func field(_ name: String) throws(PushConfigurationError) -> String {
                guard let value = account[name]?.stringValue, !value.isEmpty else {
                    throw PushConfigurationError("the FCM service account file \(file) has no \"\(name)\"")
                }
                return value
            }
            projectID = try field("project_id")
            clientEmail = try field("client_email")
            tokenURI = try field("token_uri")
            guard let key = SigningKey(pem: try field("private_key"), algorithm: .rs256) else {
                throw PushConfigurationError(
                    "the private_key of the FCM service account file \(file) is not a PKCS#8 RSA key")
            }
            self.key = key
        }
    }

    private let configuration: FCMConfiguration
    private let account: ServiceAccount
    private let clock: any WallClock
    private let client: CurlHTTPClient
    private let accessToken = Mutex(TokenState.none)
    private let tokenRequests = Atomic<Int>(0)

    /// Reads the service account named by `configuration`; throws what to fix.
    public convenience init(configuration: FCMConfiguration, clock: any WallClock = SystemWallClock())
        throws(PushConfigurationError)
    {
        self.init(
            configuration: configuration, account: try ServiceAccount(file: configuration.serviceAccountFile),
            clock: clock)
    }

    init(configuration: FCMConfiguration, account: ServiceAccount, clock: any WallClock) {
        self.configuration = configuration
        self.account = account
        self.clock = clock
        client = CurlHTTPClient(
            name: "roost-fcm",
            options: .init(caFile: configuration.caFile, maximumPending: configuration.maximumPending))
    }

    /// Access tokens requested from `token_uri` so far.
    public var accessTokensRequested: Int { tokenRequests.load(ordering: .relaxed) }
    public var connectionsOpened: Int { client.connectionsOpened }

    public func send(_ notification: PushNotification, to target: PushTarget) async -> PushOutcome {
        guard target.platform == .fcm else { return .rejected(reason: "not an FCM token") }
        let body: [UInt8]
        switch FCMMessage.body(notification, token: target.token, nowMilliseconds: clock.nowMilliseconds()) {
        case .success(let made): body = made
        case .failure(let refusal): return .rejected(reason: refusal.reason)
        }
        var refused: String?
        for _ in 0..<2 {
            let token: String
            switch await currentAccessToken(replacing: refused) {
            case .success(let current): token = current
            case .failure(let failure): return failure.outcome
            }
            let result = await client.post(
                HTTPClientRequest(
                    url: configuration.baseURL + "/v1/projects/\(account.projectID)/messages:send",
                    headers: ["authorization: Bearer \(token)", "content-type: application/json"], body: body,
                    timeoutMilliseconds: configuration.requestTimeoutMilliseconds))
            switch result {
            case .success(let response):
                switch FCMAnswer(status: response.status, headers: response.headers, body: response.body) {
                case .outcome(let outcome): return outcome
                case .refreshAccessToken: refused = token
                }
            case .failure(let error):
                return .retry(
                    after: nil,
                    reason: error.reason(
                        provider: "FCM", configuration.requestTimeoutMilliseconds,
                        configuration.maximumPending))
            }
        }
        return .rejected(reason: "FCM 401 UNAUTHENTICATED")
    }

    public func shutdown() async { await client.shutdown() }

    /// The shared access token; fetched by one caller when there is none, it is near its expiry, or
    /// it is `replacing` (refused with 401).
    private func currentAccessToken(replacing refused: String?) async -> Result<String, Failure> {
        let now = clock.nowMilliseconds() / 1000
        enum Step {
            case use(String)
            case wait
            case fetch
        }
        let step: Step = accessToken.withLock { state in
            switch state {
            case .ready(let token, let refreshAt) where now < refreshAt && token != refused:
                return .use(token)
            case .fetching: return .wait
            default:
                state = .fetching([])
                return .fetch
            }
        }
        switch step {
        case .use(let token):
            return .success(token)
        case .wait:
            return await withCheckedContinuation { continuation in
                let settled: Result<String, Failure>? = accessToken.withLock { state in
                    switch state {
                    case .fetching(let waiters):
                        state = .fetching(waiters + [continuation])
                        return nil
                    case .ready(let token, _):
                        return .success(token)
                    case .none:
                        return .failure(
                            Failure(
                                outcome: .retry(
                                    after: nil, reason: "the FCM access token could not be fetched")))
                    }
                }
                if let settled { continuation.resume(returning: settled) }
            }
        case .fetch:
            let result = await fetchAccessToken(now: now)
            let waiters = accessToken.withLock { state in
                guard case .fetching(let waiters) = state else {
                    return [CheckedContinuation<Result<String, Failure>, Never>]()
                }
                switch result {
                case .success(let fetched): state = .ready(token: fetched.token, refreshAt: fetched.refreshAt)
                case .failure: state = .none
                }
                return waiters
            }
            let shared = result.map(\.token)
            for waiter in waiters { waiter.resume(returning: shared) }
            return shared
        }
    }

    private func fetchAccessToken(now: Int64) async -> Result<(token: String, refreshAt: Int64), Failure> {
        let claims = JSONObject(uniqueMembers: [
            ("iss", .string(account.clientEmail)),
            ("scope", .string("https://www.googleapis.com/auth/firebase.messaging")),
            ("aud", .string(account.tokenURI)), ("iat", .integer(now)), ("exp", .integer(now + 3600)),
        ])
        guard
            let assertion = JSONWebToken.make(
                header: [("typ", .string("JWT"))], claims: claims, key: account.key)
        else {
            return .failure(Failure(outcome: .rejected(reason: "OpenSSL could not sign the FCM assertion")))
        }
        tokenRequests.add(1, ordering: .relaxed)
        let form = "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion=" + assertion
        let result = await client.post(
            HTTPClientRequest(
                url: account.tokenURI, headers: ["content-type: application/x-www-form-urlencoded"],
                body: Array(form.utf8),
                timeoutMilliseconds: configuration.requestTimeoutMilliseconds))
        switch result {
        case .failure(let error):
            let reason = error.reason(
                provider: "FCM token endpoint", configuration.requestTimeoutMilliseconds,
                configuration.maximumPending)
            return .failure(Failure(outcome: .retry(after: nil, reason: reason)))
        case .success(let response):
            let object = (try? JSONParser.parse(response.body))?.objectValue
            if response.status == 200, let token = object?["access_token"]?.stringValue,
                let expiresIn = object?["expires_in"]?.integerValue
            {
                return .success((token, now + expiresIn - configuration.refreshMarginSeconds))
            }
            let error = object?["error"]?.stringValue ?? "no error given"
            let reason = "the FCM token endpoint answered \(response.status) \(error)"
            if response.status == 429 || response.status >= 500 {
                return .failure(Failure(outcome: .retry(after: retryAfter(response.headers), reason: reason)))
            }
            // invalid_grant and the like: the service account is wrong until the operator fixes it.
            return .failure(Failure(outcome: .rejected(reason: reason)))
        }
    }
}
