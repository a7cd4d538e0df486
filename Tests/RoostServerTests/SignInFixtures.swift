import Foundation
import RoostCore
import RoostServer
import RoostTestSupport

/// The client ids the test servers accept.
let appleBundleId = "org.roost.Tests"
let googleClientId = "1234-test.apps.googleusercontent.com"

/// A server taking Apple and Google ID tokens from one fake provider, with a manual clock.
struct SignInWorld {
    let server: TestServer
    let provider: FakeIdentityProvider
    let clock: ManualWallClock

    static func make(
        linking: Bool = false, definition: String? = nil, dataDirectory: String? = nil,
        provider existing: FakeIdentityProvider? = nil, clock: ManualWallClock = ManualWallClock(),
        databaseURL: String? = nil, refreshMode: RefreshMode = .off, registrationsPerAddress: Int? = nil,
        keysTimeoutMilliseconds: Int? = nil, workers: BackgroundWorkers? = nil
    ) async throws -> SignInWorld {
        let provider: FakeIdentityProvider
        if let existing {
            provider = existing
        } else {
            provider = try await FakeIdentityProvider.start(authority: try await TestCertificateAuthority())
        }
        let parsed = try definition.map { try AppDefinition.parse(Array($0.utf8)) }
        let server = try await TestServer(dataDirectory: dataDirectory) { configuration in
            configuration.clock = clock
            configuration.passwordHasher =
                workers.map { PasswordHasher(operations: 1, memory: 64 * 1024, workers: $0) }
                ?? PasswordHasher.cheapForTests()
            configuration.signIn.apple.clientIds = [appleBundleId, "org.roost.Web"]
            configuration.signIn.apple.keysURL = provider.keysURL
            configuration.signIn.google.clientIds = [googleClientId]
            configuration.signIn.google.keysURL = provider.keysURL
            configuration.signIn.caFile = provider.certificateAuthority
            configuration.signIn.linkVerifiedEmails = linking
            configuration.refreshMode = refreshMode
            if let registrationsPerAddress {
                configuration.loginLimits.registrationsPerAddress = registrationsPerAddress
            }
            if let keysTimeoutMilliseconds {
                configuration.signIn.keysTimeoutMilliseconds = keysTimeoutMilliseconds
            }
            if let parsed { configuration.appDefinition = parsed }
            if let databaseURL { configuration.databaseURL = databaseURL }
        }
        return SignInWorld(server: server, provider: provider, clock: clock)
    }

    var now: Int64 { clock.nowMilliseconds() / 1000 }

    /// A fresh raw nonce, as an app makes one.
    static func makeNonce() -> String { "nonce-" + UUID().uuidString }

    /// Claims as the provider would sign them; `nonceClaim` defaults to what the provider puts
    /// for `nonce`.
    func claims(
        provider: SignInProvider = .apple, subject: String = "001234.subject", nonce: String,
        nonceClaim: String? = nil, audience: String? = nil, issuer: String? = nil, issuedAt: Int64? = nil,
        expires: Int64? = nil, email: String? = nil, emailVerified: String? = nil
    ) -> String {
        var fields = [
            #""iss":"\#(issuer ?? provider.defaultIssuer)""#,
            #""aud":"\#(audience ?? (provider == .apple ? appleBundleId : googleClientId))""#,
            #""sub":"\#(subject)""#, #""iat":\#(issuedAt ?? now)"#, #""exp":\#(expires ?? now + 600)"#,
            #""nonce":"\#(nonceClaim ?? provider.expectedNonceClaim(raw: nonce))""#,
        ]
        if let email { fields.append(#""email":"\#(email)""#) }
        if let emailVerified { fields.append(#""email_verified":\#(emailVerified)"#) }
        return "{" + fields.joined(separator: ",") + "}"
    }

    /// `POST /ff/login/{provider}` with a token the fake signs for `claims`.
    func signIn(
        _ provider: SignInProvider = .apple, subject: String = "001234.subject", email: String? = nil,
        emailVerified: String? = nil, kid: String = "rsa-1"
    ) async throws -> TestResponse {
        let nonce = Self.makeNonce()
        let token = try await self.provider.issue(
            claims: claims(
                provider: provider, subject: subject, nonce: nonce, email: email, emailVerified: emailVerified
            ),
            kid: kid)
        return try await present(token, nonce: nonce, provider: provider.rawValue)
    }

    func present(_ token: String, nonce: String, provider: String = "apple") async throws -> TestResponse {
        try await server.client.send(
            "POST", "/ff/login/\(provider)",
            json: #"{"idToken":"\#(token)","nonce":"\#(nonce)","deviceId":"phone"}"#)
    }
}

/// An error body exactly as the server writes it.
func errorBody(_ error: RoostError) -> String { String(decoding: error.jsonBody, as: UTF8.self) }

extension TestResponse {
    var userGuid: String? { (json["user"] as? [String: Any])?["guid"] as? String }
    var user: [String: Any]? { json["user"] as? [String: Any] }
}
