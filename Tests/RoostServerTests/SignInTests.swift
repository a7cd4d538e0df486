import Foundation
import RoostCore
import RoostServer
import RoostTestSupport
import Testing

@Suite("Sign in with Apple and Google: ID tokens checked against the provider's keys")
struct SignInTests {
    @Test("a valid token creates an account (201), a later token logs the same account in (200)")
    func createsThenLogsIn() async throws {
        let world = try await SignInWorld.make()
        let first = try await world.signIn()
        #expect(first.status == 201, "\(first.text)")
        #expect(first.header("Cache-Control") == "no-store")
        let guid = try #require(first.userGuid)
        let userName = try #require(first.user?["userName"] as? String)
        #expect(userName.hasPrefix("apple-"))
        let token = try #require(first.json["token"] as? String)
        let session = try await world.server.client.send("GET", "/ff/session", headers: [("X-Token", token)])
        #expect((session.json["user"] as? [String: Any])?["guid"] as? String == guid)

        let again = try await world.signIn()
        #expect(again.status == 200, "\(again.text)")
        #expect(again.userGuid == guid)
        #expect(again.json["token"] as? String != token)

        // The account has no password: no password logs it in, and the answer is the usual one.
        let password = try await world.server.client.send(
            "POST", "/ff/login", json: #"{"userName":"\#(userName)","password":""}"#)
        #expect(password.status == 401)
        #expect(password.json["code"] as? String == "invalid_credentials")

        // Another subject is another account; Google's subjects are Google's.
        let other = try await world.signIn(subject: "009999.other")
        #expect(other.status == 201)
        #expect(other.userGuid != guid)
        let google = try await world.signIn(.google, subject: "001234.subject")
        #expect(google.status == 201, "\(google.text)")
        #expect(google.userGuid != guid)
    }

    @Test("the answer is password login's: a refresh pair when asked for and on, the device's session")
    func loginAnswer() async throws {
        let world = try await SignInWorld.make(refreshMode: .optional)
        let nonce = SignInWorld.makeNonce()
        let token = try await world.provider.issue(claims: world.claims(nonce: nonce))
        let response = try await world.server.client.send(
            "POST", "/ff/login/apple",
            json: #"{"idToken":"\#(token)","nonce":"\#(nonce)","deviceId":"ipad","refresh":true}"#)
        #expect(response.status == 201)
        #expect(response.json["refreshToken"] is String)
        #expect(response.json["expiresIn"] as? Int == 900)
        let access = try #require(response.json["token"] as? String)
        let sessions = try await world.server.client.send(
            "GET", "/ff/tokens", headers: [("Authorization", "Bearer \(access)")])
        let items = try #require(sessions.json["items"] as? [[String: Any]])
        #expect(items.map { $0["deviceId"] as? String } == ["ipad"])
        // Without "refresh", a plain token.
        #expect(try await world.signIn().json["refreshToken"] == nil)
    }

    @Test("an ES256 token (EC P-256 key) signs in as an RS256 one does")
    func ellipticCurveKey() async throws {
        let world = try await SignInWorld.make()
        let response = try await world.signIn(kid: "ec-1")
        #expect(response.status == 201, "\(response.text)")
    }

    @Test("bad tokens: each its exact status and body")
    func refusals() async throws {
        let world = try await SignInWorld.make()
        let now = world.now
        let nonce = SignInWorld.makeNonce()
        let cases: [(String, String, String, RoostError)] = [
            (
                "forged signature",
                try await world.provider.issue(claims: world.claims(nonce: nonce), forge: true), nonce,
                .invalidIdentityToken
            ),
            (
                "wrong audience",
                try await world.provider.issue(claims: world.claims(nonce: nonce, audience: "org.evil.App")),
                nonce,
                .wrongAudience
            ),
            (
                "wrong issuer",
                try await world.provider.issue(
                    claims: world.claims(nonce: nonce, issuer: "https://evil.example")),
                nonce, .invalidIdentityToken
            ),
            (
                "expired beyond the skew",
                try await world.provider.issue(
                    claims: world.claims(nonce: nonce, issuedAt: now - 900, expires: now - 61)), nonce,
                .identityTokenExpired
            ),
            (
                "issued in the future beyond the skew",
                try await world.provider.issue(claims: world.claims(nonce: nonce, issuedAt: now + 61)), nonce,
                .identityTokenExpired
            ),
            (
                "nonce mismatch",
                try await world.provider.issue(claims: world.claims(nonce: nonce)), SignInWorld.makeNonce(),
                .nonceMismatch
            ),
            (
                "Apple's nonce claim is the SHA-256 of the raw nonce, not the raw nonce",
                try await world.provider.issue(claims: world.claims(nonce: nonce, nonceClaim: nonce)), nonce,
                .nonceMismatch
            ),
            ("not a JWT", "abc.def", nonce, .invalidIdentityToken),
            (
                "signed with a key of another type than the header says",
                try await world.provider.issue(claims: world.claims(nonce: nonce), kid: "ec-1")
                    .replacingOccurrences(of: "eyJhbGciOiAiRVMyNTYi", with: "eyJhbGciOiAiUlMyNTYi"), nonce,
                .invalidIdentityToken
            ),
        ]
        for (name, token, presented, error) in cases {
            let response = try await world.present(token, nonce: presented)
            #expect(response.status == error.status, "\(name)")
            #expect(response.text == errorBody(error), "\(name): \(response.text)")
        }
        // Within the skew (60 s) both ways, a token is fine.
        let skewed = try await world.provider.issue(
            claims: world.claims(nonce: nonce, issuedAt: now + 59, expires: now - 59))
        #expect(try await world.present(skewed, nonce: nonce).status == 201)
    }

    @Test("Google's nonce claim is the raw nonce")
    func googleNonce() async throws {
        let world = try await SignInWorld.make()
        let nonce = SignInWorld.makeNonce()
        let hashed = try await world.provider.issue(
            claims: world.claims(
                provider: .google, nonce: nonce,
                nonceClaim: SignInProvider.apple.expectedNonceClaim(raw: nonce)))
        #expect(
            try await world.present(hashed, nonce: nonce, provider: "google").text
                == errorBody(.nonceMismatch))
        let raw = try await world.provider.issue(claims: world.claims(provider: .google, nonce: nonce))
        #expect(try await world.present(raw, nonce: nonce, provider: "google").status == 201)
        // Google's older issuer spelling is Google's too.
        let bare = try await world.provider.issue(
            claims: world.claims(
                provider: .google, subject: "g2", nonce: nonce, issuer: "accounts.google.com"))
        #expect(try await world.present(bare, nonce: nonce, provider: "google").status == 201)
        #expect(
            SignInProvider.apple.expectedNonceClaim(raw: "abc")
                == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    }

    @Test("a token presented twice is refused the second time")
    func replay() async throws {
        let world = try await SignInWorld.make()
        let nonce = SignInWorld.makeNonce()
        let token = try await world.provider.issue(claims: world.claims(nonce: nonce))
        #expect(try await world.present(token, nonce: nonce).status == 201)
        let again = try await world.present(token, nonce: nonce)
        #expect(again.status == 401)
        #expect(again.text == errorBody(.nonceReplayed))

        // Presented by several clients at once: one wins.
        let racing = SignInWorld.makeNonce()
        let raced = try await world.provider.issue(claims: world.claims(subject: "racer", nonce: racing))
        let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<6 { group.addTask { try await world.present(raced, nonce: racing).status } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(statuses.sorted() == [201, 401, 401, 401, 401, 401])
    }

    @Test(
        "the spent nonce is in the database: another instance (PostgreSQL) or a restart (SQLite) refuses it")
    func replayAcrossInstances() async throws {
        let world = try await SignInWorld.make()
        let nonce = SignInWorld.makeNonce()
        let token = try await world.provider.issue(claims: world.claims(nonce: nonce))
        #expect(try await world.present(token, nonce: nonce).status == 201)
        let other: SignInWorld
        if let url = TestBackend.recordedDatabaseURL(for: world.server.dataDirectory) {
            other = try await SignInWorld.make(provider: world.provider, clock: world.clock, databaseURL: url)
        } else {
            await world.server.stop()
            other = try await SignInWorld.make(
                dataDirectory: world.server.dataDirectory, provider: world.provider, clock: world.clock)
        }
        #expect(try await other.present(token, nonce: nonce).text == errorBody(.nonceReplayed))
    }

    @Test("an unknown kid refetches the keys at most once a minute; a rotated key is found by that refetch")
    func unknownKeyRefetch() async throws {
        let world = try await SignInWorld.make()
        #expect(try await world.signIn().status == 201)
        #expect(world.provider.keyFetches == 1)
        // Within the minute after a fetch: refused without asking the provider.
        let first = try await world.signIn(kid: "made-up-1")
        #expect(first.text == errorBody(.unknownKey))
        #expect(world.provider.keyFetches == 1)
        world.clock.advance(seconds: 60)
        let second = try await world.signIn(kid: "made-up-2")
        #expect(second.text == errorBody(.unknownKey))
        #expect(world.provider.keyFetches == 2)
        for attempt in 3...10 {
            #expect(try await world.signIn(kid: "made-up-\(attempt)").text == errorBody(.unknownKey))
        }
        #expect(world.provider.keyFetches == 2)
        // Many at once, once the minute has passed: one fetch between them.
        world.clock.advance(seconds: 60)
        let answers = try await withThrowingTaskGroup(of: String.self) { group in
            for attempt in 0..<16 { group.addTask { try await world.signIn(kid: "at-once-\(attempt)").text } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(answers == Array(repeating: errorBody(.unknownKey), count: 16))
        #expect(world.provider.keyFetches == 3)
        // The provider rotates its key: tokens of the new key work once the next refetch may run.
        let kid = try await world.provider.rotate()
        world.clock.advance(seconds: 60)
        #expect(try await world.signIn(kid: kid).status == 200)
        #expect(world.provider.keyFetches == 4)
        // Known keys need no fetch, within the keys' hour.
        #expect(try await world.signIn(kid: kid).status == 200)
        #expect(world.provider.keyFetches == 4)
    }

    @Test("the key set unreachable: 503 provider_unavailable, and no fetch more than once a minute")
    func providerDown() async throws {
        let world = try await SignInWorld.make()
        try await world.provider.setDown(true)
        let response = try await world.signIn()
        #expect(response.status == 503)
        #expect(response.text == errorBody(.providerUnavailable))
        #expect(try await world.signIn().status == 503)
        #expect(world.provider.keyFetches == 1)
        try await world.provider.setDown(false)
        world.clock.advance(seconds: 60)
        #expect(try await world.signIn().status == 201)
        #expect(world.provider.keyFetches == 2)
        // Down again after the keys' hour: the keys fetched before still serve.
        try await world.provider.setDown(true)
        world.clock.advance(seconds: 3600)
        #expect(try await world.signIn().status == 200)
        #expect(world.provider.keyFetches == 3)
    }

    @Test("new accounts count against the registration throttle; sign-ins of existing ones do not")
    func registrationThrottle() async throws {
        let world = try await SignInWorld.make(registrationsPerAddress: 2)
        #expect(try await world.signIn(subject: "a").status == 201)
        #expect(try await world.signIn(subject: "b").status == 201)
        let third = try await world.signIn(subject: "c")
        #expect(third.status == 429)
        #expect(third.json["code"] as? String == "too_many_registrations")
        #expect(try await world.signIn(subject: "a").status == 200)
    }

    @Test("a key set over 64 KiB is not read: 503 provider_unavailable")
    func keySetTooLarge() async throws {
        let world = try await SignInWorld.make()
        try await world.provider.setDown(false, padding: 64 * 1024)
        #expect(try await world.signIn().text == errorBody(.providerUnavailable))
        try await world.provider.setDown(false, padding: 60 * 1024)
        world.clock.advance(seconds: 60)
        #expect(try await world.signIn().status == 201)
    }

    @Test("a token over 8 KiB is refused unread")
    func tokenTooLarge() async throws {
        let world = try await SignInWorld.make()
        let nonce = SignInWorld.makeNonce()
        let large = String(repeating: "a", count: SignInService.maximumTokenBytes + 1)
        #expect(try await world.present(large, nonce: nonce).text == errorBody(.invalidIdentityToken))
        #expect(world.provider.keyFetches == 0)
    }

    @Test("providers that are not configured, and bodies without what is needed")
    func notConfigured() async throws {
        let world = try await SignInWorld.make()
        let unknown = try await world.server.client.send(
            "POST", "/ff/login/facebook", json: #"{"idToken":"x","nonce":"y"}"#)
        #expect(unknown.status == 404)
        #expect(unknown.text == errorBody(.providerNotConfigured("facebook")))
        let missing = try await world.server.client.send("POST", "/ff/login/apple", json: #"{"nonce":"y"}"#)
        #expect(missing.status == 400)
        #expect(missing.json["code"] as? String == "missing_field")
        let short = try await world.server.client.send(
            "POST", "/ff/login/apple", json: #"{"idToken":"x","nonce":"short"}"#)
        #expect(short.status == 400)
        #expect(short.json["code"] as? String == "invalid_field")

        // A server with no client ids has no provider at all.
        let plain = try await TestServer()
        let refused = try await plain.client.send(
            "POST", "/ff/login/apple", json: #"{"idToken":"x","nonce":"0123456789abcdef"}"#)
        #expect(refused.text == errorBody(.providerNotConfigured("apple")))
    }

    /// Found by the audit of what differs between instances: the verifier was made only when a
    /// provider was configured at start, so an instance started before `roost app apply` named one
    /// (or without `--app`, reading the shared definition later) answered 404 until restarted.
    @Test("a provider the definition names after the start signs in, with no restart")
    func providerNamedAfterStart() async throws {
        let provider = try await FakeIdentityProvider.start(authority: try await TestCertificateAuthority())
        let clock = ManualWallClock()
        let server = try await TestServer { configuration in
            configuration.clock = clock
            configuration.passwordHasher = PasswordHasher.cheapForTests()
            configuration.signIn.apple.keysURL = provider.keysURL
            configuration.signIn.caFile = provider.certificateAuthority
        }
        let world = SignInWorld(server: server, provider: provider, clock: clock)
        let before = try await world.signIn()
        #expect(before.text == errorBody(.providerNotConfigured("apple")))
        server.application.definitions.replace(
            with: try AppDefinition.parse(
                Array(#"{"settings": {"signIn": {"apple": {"clientIds": ["\#(appleBundleId)"]}}}}"#.utf8)))
        let after = try await world.signIn()
        #expect(after.status == 201, "\(after.text)")
    }

    @Test("the app definition's signIn.clientIds replace the configured ones")
    func definitionClientIds() async throws {
        let world = try await SignInWorld.make(
            definition: #"{"settings": {"signIn": {"apple": {"clientIds": ["org.roost.Other"]}}}}"#)
        let nonce = SignInWorld.makeNonce()
        let configured = try await world.provider.issue(claims: world.claims(nonce: nonce))
        #expect(try await world.present(configured, nonce: nonce).text == errorBody(.wrongAudience))
        let other = try await world.provider.issue(
            claims: world.claims(nonce: nonce, audience: "org.roost.Other"))
        #expect(try await world.present(other, nonce: nonce).status == 201)
    }

    @Test("roost serve's options turn Apple on: the real binary signs in against the fake")
    func serveOptions() async throws {
        let authority = try await TestCertificateAuthority()
        let provider = try await FakeIdentityProvider.start(authority: authority)
        let directory = TestServer.makeTemporaryDirectory()
        let server = try RoostProcess(
            dataDirectory: directory,
            arguments: [
                "--apple-client-ids", "org.other.App, \(appleBundleId)", "--apple-keys-url", provider.keysURL,
                "--sign-in-ca-file", authority.certificate,
            ])
        let client = TestHTTPClient(port: server.port)
        let now = Int64(Date().timeIntervalSince1970)
        let nonce = SignInWorld.makeNonce()
        let token = try await provider.issue(
            claims:
                #"{"iss":"https://appleid.apple.com","aud":"\#(appleBundleId)","sub":"p1","iat":\#(now),"exp":\#(now + 600),"nonce":"\#(SignInProvider.apple.expectedNonceClaim(raw: nonce))"}"#
        )
        let response = try await client.send(
            "POST", "/ff/login/apple", json: #"{"idToken":"\#(token)","nonce":"\#(nonce)"}"#)
        #expect(response.status == 201, "\(response.text)")
        let google = try await client.send("POST", "/ff/login/google", json: #"{"idToken":"x","nonce":"y"}"#)
        #expect(google.text == errorBody(.providerNotConfigured("google")))
        #expect(try await server.stop(signal: SIGTERM) == 0)
    }
}
