import Foundation
import RoostClient
import RoostCore
import RoostTestSupport
import Testing

/// Sign in with Apple and Google through the SDK, against a real server and the fake provider.
@Suite struct SignInClientTests {
    @Test func signInWithAppleThenGoogleListsAndUnlinks() async throws {
        let provider = try await FakeIdentityProvider.start(authority: try await TestCertificateAuthority())
        let server = try await TestServer { configuration in
            configuration.passwordHasher = PasswordHasher.cheapForTests()
            configuration.signIn.apple.clientIds = ["org.roost.Tests"]
            configuration.signIn.apple.keysURL = provider.keysURL
            configuration.signIn.google.clientIds = ["web.apps.googleusercontent.com"]
            configuration.signIn.google.keysURL = provider.keysURL
            configuration.signIn.caFile = provider.certificateAuthority
        }
        func token(_ provider: SignInProvider, aud: String, nonce: String) async throws -> String {
            let now = Int64(Date().timeIntervalSince1970)
            return try await providerToken(
                #"{"iss":"\#(provider.defaultIssuer)","aud":"\#(aud)","sub":"user-1","iat":\#(now),"exp":\#(now + 600),"nonce":"\#(provider.expectedNonceClaim(raw: nonce))"}"#
            )
        }
        func providerToken(_ claims: String) async throws -> String {
            try await provider.issue(claims: claims)
        }

        let client = try makeClient(port: server.port)
        let nonce = "raw-nonce-" + UUID().uuidString
        let appleToken = try await token(.apple, aud: "org.roost.Tests", nonce: nonce)
        let user = try await client.signInWithApple(idToken: appleToken, nonce: nonce)
        #expect(user.userName.hasPrefix("apple-"))
        #expect(await client.isLoggedIn)
        #expect(try await client.session()?.guid == user.guid)
        #expect(try await client.identities().map(\.provider) == ["apple"])

        // The same token again: the server refuses the replay with its code.
        let replayed = await #expect(throws: RoostClient.RoostError.self) {
            try await makeClient(port: server.port).signInWithApple(idToken: appleToken, nonce: nonce)
        }
        #expect(replayed?.code == "nonce_replayed")
        #expect(replayed?.status == 401)

        let google = try makeClient(port: server.port)
        let googleNonce = "google-nonce-" + UUID().uuidString
        let googleUser = try await google.signInWithGoogle(
            idToken: try await token(.google, aud: "web.apps.googleusercontent.com", nonce: googleNonce),
            nonce: googleNonce)
        #expect(googleUser.guid != user.guid)
        let last = await #expect(throws: RoostClient.RoostError.self) {
            try await google.unlinkIdentity(provider: "google")
        }
        #expect(last?.code == "last_sign_in_method")
        #expect(last?.status == 409)
    }
}
