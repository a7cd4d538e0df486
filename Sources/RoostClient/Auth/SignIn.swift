import Foundation

/// A sign-in identity of the user's (Apple, Google), as `GET /ff/me/identities` lists it.
public struct RoostIdentity: Codable, Sendable, Equatable {
    /// `apple` or `google`.
    public let provider: String
    /// The provider's stable id of the user.
    public let subject: String
    public let email: String?
    /// Milliseconds since 1970.
    public let createdAt: Int64
}

extension Roost {
    private struct IdentityPage: Decodable {
        let items: [RoostIdentity]
    }

    /// Signs in with the identity token of Sign in with Apple (`ASAuthorizationAppleIDCredential`'s
    /// `identityToken` as text) and the raw nonce whose SHA-256 (hex) the app gave
    /// `ASAuthorizationAppleIDRequest.nonce`. Creates the account on first use.
    @discardableResult
    public func signInWithApple(idToken: String, nonce: String) async throws -> RoostUser {
        try await signIn(provider: "apple", idToken: idToken, nonce: nonce)
    }

    /// Signs in with a Google ID token and the nonce the app gave Google Sign-In (unhashed).
    @discardableResult
    public func signInWithGoogle(idToken: String, nonce: String) async throws -> RoostUser {
        try await signIn(provider: "google", idToken: idToken, nonce: nonce)
    }

    private func signIn(provider: String, idToken: String, nonce: String) async throws -> RoostUser {
        try await authenticate(
            path: "/ff/login/\(provider)", body: ["idToken": .string(idToken), "nonce": .string(nonce)])
    }

    /// The logged-in user's sign-in identities.
    public func identities() async throws -> [RoostIdentity] {
        let response = try await send(TransportRequest(method: "GET", path: "/ff/me/identities"))
        guard response.status == 200 else { throw RoostError.from(response) }
        return try Wire.decode(IdentityPage.self, from: response.body).items
    }

    /// Unlinks the user's identity of `provider`; the server keeps the account's last way in
    /// (`last_sign_in_method`).
    public func unlinkIdentity(provider: String) async throws {
        let response = try await send(
            TransportRequest(method: "DELETE", path: "/ff/me/identities/\(provider)"))
        guard response.status == 204 else { throw RoostError.from(response) }
    }
}
