import RoostCore
import RoostJSON
import Synchronization

/// Checks ID tokens against their provider's JSON Web Key Set, fetched over HTTPS by libcurl's
/// thread (never an event loop), at most 64 KiB, cached for ``SignInSettings/keyLifetime``, and
/// fetched again for an unknown key id at most once per ``SignInSettings/keyRefetchInterval``.
public final class JWKSVerifier: IdentityTokenVerifier {
    private let client: CurlHTTPClient
    private let caches: [SignInProvider: KeySetCache]
    /// Where signatures are checked (an RSA-4096 check is a CPU cost a client can repeat at will,
    /// so not on an event loop): the password hasher's bounded low-priority workers; nil: inline.
    private let workers: BackgroundWorkers?

    public init(
        settings: SignInSettings, clock: any WallClock = SystemWallClock(),
        workers: BackgroundWorkers? = .shared
    ) {
        self.workers = workers
        let client = CurlHTTPClient(
            name: "roost-jwks", options: CurlHTTPClient.Options(caFile: settings.caFile, maximumPending: 64))
        self.client = client
        var caches: [SignInProvider: KeySetCache] = [:]
        for provider in SignInProvider.allCases {
            caches[provider] = KeySetCache(
                url: settings[provider].keysURL, client: client, clock: clock,
                lifetime: Int64(settings.keyLifetime) * 1000,
                refetchInterval: Int64(settings.keyRefetchInterval) * 1000,
                timeout: settings.keysTimeoutMilliseconds)
        }
        self.caches = caches
    }

    public func verifiedClaims(of token: String, provider: SignInProvider) async throws -> JSONObject {
        guard let parts = JSONWebToken.parts(of: token), let alg = parts.header["alg"]?.stringValue,
            let algorithm = SigningKey.Algorithm(rawValue: alg), let kid = parts.header["kid"]?.stringValue,
            !kid.isEmpty, kid.utf8.count <= 128
        else { throw RoostError.invalidIdentityToken }
        let key = try await caches[provider]!.key(id: kid)
        // The key's type decides the algorithm: a token cannot choose a weaker check (alg confusion).
        guard key.algorithm == algorithm else { throw RoostError.invalidIdentityToken }
        let (signature, signingInput) = (parts.signature, parts.signingInput)
        let verified: Bool
        if let workers {
            do {
                verified = try await workers.runBounded { key.verifies(signature, of: signingInput) }
            } catch is BackgroundWorkers.QueueFull {
                throw RoostError.serverBusy(
                    retryAfter: 2,
                    message: "The server is busy checking other sign-ins; try again in a few seconds.")
            }
        } else {
            verified = key.verifies(signature, of: signingInput)
        }
        guard verified else { throw RoostError.invalidIdentityToken }
        return parts.claims
    }

    public func shutdown() async { await client.shutdown() }
}

/// One provider's keys. An actor: fetches are serialised, and callers arriving during a fetch
/// wait for it instead of starting another.
actor KeySetCache {
    /// Keys read from one set, at most; the rest are ignored.
    static let maximumKeys = 64

    let url: String
    let client: CurlHTTPClient
    let clock: any WallClock
    let lifetime: Int64
    let refetchInterval: Int64
    let timeout: Int

    private var keys: [String: VerificationKey] = [:]
    /// When the keys were last fetched successfully.
    private var fetchedAt: Int64?
    private var lastAttempt: Int64?
    private var lastAttemptFailed = false
    private var fetching = false
    private var waiting: [CheckedContinuation<Void, Never>] = []

    init(
        url: String, client: CurlHTTPClient, clock: any WallClock, lifetime: Int64, refetchInterval: Int64,
        timeout: Int
    ) {
        self.url = url
        self.client = client
        self.clock = clock
        self.lifetime = lifetime
        self.refetchInterval = refetchInterval
        self.timeout = timeout
    }

    func key(id: String) async throws -> VerificationKey {
        // A fresh cached key serves at once, even during a fetch: a token with a made-up kid
        // (a refetch a minute at most, up to the fetch timeout) must not hold up every sign-in.
        if let key = keys[id], !isStale(at: clock.nowMilliseconds()) { return key }
        while fetching { await withCheckedContinuation { waiting.append($0) } }
        let now = clock.nowMilliseconds()
        let stale = isStale(at: now)
        let mayFetch = lastAttempt.map { now - $0 >= refetchInterval } ?? true
        if (stale || keys[id] == nil) && mayFetch { await fetch(now: now) }
        // Stale keys serve while the provider is unreachable.
        if let key = keys[id] { return key }
        if fetchedAt == nil || lastAttemptFailed { throw RoostError.providerUnavailable }
        throw RoostError.unknownKey
    }

    private func isStale(at now: Int64) -> Bool {
        fetchedAt.map { now - $0 >= lifetime } ?? true
    }

    private func fetch(now: Int64) async {
        fetching = true
        lastAttempt = now
        let answer = await client.post(
            HTTPClientRequest(
                url: url, headers: ["Accept: application/json"], body: [], timeoutMilliseconds: timeout,
                method: "GET"))
        if case .success(let response) = answer, response.status == 200,
            let parsed = Self.keys(in: response.body)
        {
            keys = parsed
            fetchedAt = now
            lastAttemptFailed = false
        } else {
            lastAttemptFailed = true
        }
        fetching = false
        let resumed = waiting
        waiting = []
        for waiter in resumed { waiter.resume() }
    }

    /// `{"keys": [{"kid": …, "kty": …}, …]}`; nil when it is not a key set with a usable key.
    static func keys(in body: [UInt8]) -> [String: VerificationKey]? {
        guard case .object(let set)? = try? JSONParser.parse(body), case .array(let entries)? = set["keys"]
        else {
            return nil
        }
        var keys: [String: VerificationKey] = [:]
        for entry in entries.prefix(maximumKeys) {
            guard case .object(let fields) = entry, let kid = fields["kid"]?.stringValue else { continue }
            var strings: [String: String] = [:]
            for member in fields.members {
                if let text = member.value.stringValue { strings[member.key] = text }
            }
            if let key = VerificationKey(jwk: strings) { keys[kid] = key }
        }
        return keys.isEmpty ? nil : keys
    }
}

/// The JWKS verifier, started (with libcurl's thread) on the first sign-in: every server can take
/// sign-ins as soon as its definition names a provider, with no restart, and one whose definition
/// never does costs no thread.
public final class LazyJWKSVerifier: IdentityTokenVerifier {
    private let settings: SignInSettings
    private let clock: any WallClock
    private let workers: BackgroundWorkers?
    /// The verifier once started; `stopped` once shut down (later calls are refused).
    private let state = Mutex<(verifier: JWKSVerifier?, stopped: Bool)>((nil, false))

    public init(
        settings: SignInSettings, clock: any WallClock = SystemWallClock(),
        workers: BackgroundWorkers? = .shared
    ) {
        self.settings = settings
        self.clock = clock
        self.workers = workers
    }

    public func verifiedClaims(of token: String, provider: SignInProvider) async throws -> JSONObject {
        let verifier = state.withLock { state -> JWKSVerifier? in
            if state.verifier == nil, !state.stopped {
                state.verifier = JWKSVerifier(settings: settings, clock: clock, workers: workers)
            }
            return state.verifier
        }
        guard let verifier else { throw RoostError.providerUnavailable }
        return try await verifier.verifiedClaims(of: token, provider: provider)
    }

    public func shutdown() async {
        let verifier = state.withLock { state in
            state.stopped = true
            return state.verifier
        }
        await verifier?.shutdown()
    }
}
