import Foundation

/// A fake Apple or Google ID-token issuer (Tests/fakes/fake_oidc.py): its key set over TLS with
/// a throwaway CA, and a plain-HTTP control port where the test has tokens signed, keys rotated
/// and the key set taken down.
public struct FakeIdentityProvider: Sendable {
    public let fake: FakePushProvider
    public let certificateAuthority: String
    /// The control listener.
    public let control: TestHTTPClient

    /// The key set's URL (`--apple-keys-url`, `--google-keys-url`).
    public var keysURL: String { "https://127.0.0.1:\(fake.port)/keys" }
    /// Fetches of the key set so far.
    public var keyFetches: Int { fake.events("keys").count }

    public static func start(authority: TestCertificateAuthority) async throws -> FakeIdentityProvider {
        let server = try await authority.issue("oidc")
        let fake = try await FakePushProvider.start(
            "fake_oidc.py",
            [
                "--cert", server.certificate, "--key", server.key, "--key-dir",
                authority.folder + "/oidc-keys-\(UUID().uuidString)",
            ], folder: authority.folder, python: "/usr/bin/python3")
        guard let controlPort = fake.secondPort else {
            throw TestClientError(description: "fake_oidc.py printed no control port")
        }
        return FakeIdentityProvider(
            fake: fake, certificateAuthority: authority.certificate,
            control: TestHTTPClient(port: controlPort))
    }

    /// A token of `claims` (a JSON object's text) signed with the key `kid`; `forge` signs it
    /// with a key the set does not list, under the same kid.
    public func issue(claims: String, kid: String = "rsa-1", forge: Bool = false) async throws -> String {
        let response = try await control.send(
            "POST", "/issue", json: #"{"claims":\#(claims),"kid":"\#(kid)","forge":\#(forge)}"#)
        guard response.status == 200, let token = response.json["token"] as? String else {
            throw TestClientError(
                description: "fake_oidc.py issued nothing: \(response.text) \(fake.errorOutput)")
        }
        return token
    }

    /// Replaces the RSA key with a new one; its kid.
    public func rotate() async throws -> String {
        let response = try await control.send("POST", "/rotate", json: "{}")
        guard let kid = response.json["kid"] as? String else {
            throw TestClientError(description: response.text)
        }
        return kid
    }

    /// Holds fetches of the key set unanswered (`hold`) until released.
    public func hold(_ hold: Bool) async throws {
        _ = try await control.send("POST", "/hold", json: #"{"hold":\#(hold)}"#)
    }

    /// Fetches of the key set that arrived while held.
    public var heldFetches: Int { fake.events("held").count }

    /// Makes the key set answer 503 (`down`) or 200, padded with `padding` bytes.
    public func setDown(_ down: Bool, padding: Int = 0) async throws {
        _ = try await control.send("POST", "/down", json: #"{"down":\#(down),"pad":\#(padding)}"#)
    }
}
