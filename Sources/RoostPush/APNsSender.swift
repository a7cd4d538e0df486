import Foundation
import RoostCore
import RoostJSON
import Synchronization

/// How to reach APNs with token authentication.
public struct APNsConfiguration: Sendable {
    /// The `.p8` file Apple's developer site gives (a PKCS#8 P-256 key); read once, never logged.
    public var keyFile: String
    /// The key's 10-character id (`kid`).
    public var keyID: String
    /// The developer team id (`iss`).
    public var teamID: String
    public var productionURL = "https://api.push.apple.com"
    public var sandboxURL = "https://api.sandbox.push.apple.com"
    /// How long one provider token (JWT) is used: Apple refuses tokens older than an hour and
    /// answers 429 `TooManyProviderTokenUpdates` to renewals more often than every 20 minutes.
    public var providerTokenLifetimeSeconds: Int64 = 40 * 60
    public var requestTimeoutMilliseconds = 10_000
    /// Sends waiting or in flight beyond which a send answers `.retry` at once.
    public var maximumPending = 1000
    /// A CA bundle to trust instead of the system's (tests).
    public var caFile: String?

    public init(keyFile: String, keyID: String, teamID: String) {
        self.keyFile = keyFile
        self.keyID = keyID
        self.teamID = teamID
    }
}

/// A configuration that cannot work, said so that the operator knows what to fix.
public struct PushConfigurationError: Error, Sendable, Equatable, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// Sends to APNs over one long-lived HTTP/2 connection per environment, authenticated by an ES256
/// provider token that is minted on a schedule and shared by every request.
public final class APNsSender: PushSender {
    private let configuration: APNsConfiguration
    private let key: SigningKey
    private let clock: any WallClock
    private let client: CurlHTTPClient
    private let providerToken = Mutex<(jwt: String, issuedAt: Int64)?>(nil)
    private let minted = Atomic<Int>(0)

    /// Reads the key named by `configuration`; throws what to fix.
    public convenience init(configuration: APNsConfiguration, clock: any WallClock = SystemWallClock())
        throws(PushConfigurationError)
    {
        self.init(configuration: configuration, key: try Self.loadKey(configuration), clock: clock)
    }

    init(configuration: APNsConfiguration, key: SigningKey, clock: any WallClock) {
        self.configuration = configuration
        self.key = key
        self.clock = clock
        client = CurlHTTPClient(
            name: "roost-apns",
            options: .init(caFile: configuration.caFile, maximumPending: configuration.maximumPending))
    }

    static func loadKey(_ configuration: APNsConfiguration) throws(PushConfigurationError) -> SigningKey {
        let pem: String
        do {
            pem = try String(contentsOfFile: configuration.keyFile, encoding: .utf8)
        } catch {
            throw PushConfigurationError(
                "cannot read the APNs key file \(configuration.keyFile): \(error.localizedDescription)")
        }
        guard let key = SigningKey(pem: pem, algorithm: .es256) else {
            throw PushConfigurationError(
                "the APNs key file \(configuration.keyFile) is not a PKCS#8 P-256 key (.p8, \"-----BEGIN PRIVATE KEY-----\")"
            )
        }
        guard configuration.keyID.count == 10, configuration.teamID.count == 10 else {
            throw PushConfigurationError(
                "the APNs key id and team id are 10 characters each (Apple's developer site, Keys and Membership)"
            )
        }
        return key
    }

    /// TCP connections opened to APNs so far (a healthy sender keeps this at one per environment).
    public var connectionsOpened: Int { client.connectionsOpened }
    /// Provider tokens (JWTs) signed so far.
    public var providerTokensMinted: Int { minted.load(ordering: .relaxed) }

    public func send(_ notification: PushNotification, to target: PushTarget) async -> PushOutcome {
        guard target.platform == .apns else { return .rejected(reason: "not an APNs token") }
        guard let environment = target.environment else {
            return .rejected(reason: "an APNs token needs its environment (sandbox or production)")
        }
        guard !target.token.isEmpty, target.token.allSatisfy(\.isHexDigit) else {
            return .rejected(reason: "an APNs device token is hexadecimal")
        }
        let request: APNsRequest
        switch APNsRequest.make(notification, topic: target.bundleID) {
        case .success(let made): request = made
        case .failure(let refusal): return .rejected(reason: refusal.reason)
        }
        let base = environment == .production ? configuration.productionURL : configuration.sandboxURL
        let url = base + "/3/device/" + target.token
        guard var jwt = currentProviderToken() else {
            return .rejected(reason: "OpenSSL could not sign the provider token")
        }
        for attempt in 0..<2 {
            let answer = await post(url: url, request: request, jwt: jwt)
            switch answer {
            case .outcome(let outcome):
                return outcome
            case .renewProviderToken where attempt == 0:
                guard let renewed = renewProviderToken(replacing: jwt) else { break }
                jwt = renewed
            case .renewProviderToken:
                break
            }
        }
        return .rejected(reason: "APNs 403 ExpiredProviderToken")
    }

    public func shutdown() async { await client.shutdown() }

    private func post(url: String, request: APNsRequest, jwt: String) async -> APNsAnswer {
        let result = await client.post(
            HTTPClientRequest(
                url: url, headers: request.headers + ["authorization: bearer \(jwt)"], body: request.payload,
                timeoutMilliseconds: configuration.requestTimeoutMilliseconds))
        switch result {
        case .success(let response):
            return APNsAnswer(status: response.status, headers: response.headers, body: response.body)
        case .failure(let error):
            return .outcome(
                .retry(
                    after: nil,
                    reason: error.reason(
                        provider: "APNs", configuration.requestTimeoutMilliseconds,
                        configuration.maximumPending)))
        }
    }

    /// The shared JWT, minted when there is none or it has reached its lifetime.
    private func currentProviderToken() -> String? {
        let now = clock.nowMilliseconds() / 1000
        return providerToken.withLock { token in
            if let token, now - token.issuedAt < configuration.providerTokenLifetimeSeconds {
                return token.jwt
            }
            return mint(at: now, into: &token)
        }
    }

    /// After `ExpiredProviderToken`: a new JWT, unless another send has already replaced `old`.
    private func renewProviderToken(replacing old: String) -> String? {
        let now = clock.nowMilliseconds() / 1000
        return providerToken.withLock { token in
            if let token, token.jwt != old { return token.jwt }
            return mint(at: now, into: &token)
        }
    }

    private func mint(at now: Int64, into token: inout (jwt: String, issuedAt: Int64)?) -> String? {
        let claims = JSONObject(uniqueMembers: [
            ("iss", .string(configuration.teamID)), ("iat", .integer(now)),
        ])
        guard
            let jwt = JSONWebToken.make(
                header: [("kid", .string(configuration.keyID))], claims: claims, key: key)
        else { return nil }
        minted.add(1, ordering: .relaxed)
        token = (jwt, now)
        return jwt
    }
}

extension HTTPClientError {
    /// The `.retry` reason for a request that got no answer.
    func reason(provider: String, _ timeoutMilliseconds: Int, _ maximumPending: Int) -> String {
        switch self {
        case .timedOut: "\(provider) did not answer within \(timeoutMilliseconds) ms"
        case .transport(let message): "\(provider) connection: \(message)"
        case .overloaded: "more than \(maximumPending) \(provider) pushes in flight"
        case .shutDown: "the \(provider) sender is shut down"
        }
    }
}
