import Foundation
import RoostCore
import RoostServer
import RoostTestSupport
import Testing

@Suite("Identities: linking by verified email, listing, unlinking, administrators, the CLI")
struct IdentityTests {
    @Test("linking is off by default: a verified email another account has makes a new account without it")
    func noLinkingByDefault() async throws {
        let world = try await SignInWorld.make()
        let erin = try await world.server.client.register("erin", extra: #","email":"erin@example.com""#)
        let response = try await world.signIn(email: "Erin@example.com", emailVerified: "true")
        #expect(response.status == 201)
        #expect(response.userGuid != erin.userGuid)
        #expect(response.user?["email"] == nil)
        // A free verified address goes on the new account.
        let fresh = try await world.signIn(subject: "s2", email: "frank@example.com", emailVerified: "true")
        #expect(fresh.user?["email"] as? String == "frank@example.com")
    }

    @Test("with linking on, only a verified email links (Apple's \"true\" string or a boolean)")
    func linkingVerifiedEmails() async throws {
        let world = try await SignInWorld.make(linking: true)
        let erin = try await world.server.client.register("erin", extra: #","email":"erin@example.com""#)
        let unverified = try await world.signIn(
            subject: "s1", email: "erin@example.com", emailVerified: "false")
        #expect(unverified.status == 201)
        #expect(unverified.userGuid != erin.userGuid)
        let verified = try await world.signIn(
            subject: "s2", email: "ERIN@example.com", emailVerified: #""true""#)
        #expect(verified.status == 200, "\(verified.text)")
        #expect(verified.userGuid == erin.userGuid)
        // Whoever registered the address first may not own it (addresses are not verified): the
        // link ends the account's password and sessions (found by review: a pre-registered
        // attacker kept both).
        let erinToken = try #require(erin.json["token"] as? String)
        let old = try await world.server.client.send("GET", "/ff/tokens", headers: [("X-Token", erinToken)])
        #expect(old.status == 401)
        let password = try await world.server.client.send(
            "POST", "/ff/login", json: #"{"userName":"erin","password":"correct horse"}"#)
        #expect(password.status == 401)
        #expect(password.json["code"] as? String == "invalid_credentials")
        // Linked by subject from now on, whatever the email says.
        let later = try await world.signIn(subject: "s2")
        #expect(later.userGuid == erin.userGuid)
        // The account has an Apple identity already: another Apple subject with its email is refused.
        let third = try await world.signIn(subject: "s3", email: "erin@example.com", emailVerified: "true")
        #expect(third.status == 409)
        #expect(third.json["code"] as? String == "identity_taken")
        // An address used as a user name is that account's email too.
        let ivy = try await world.server.client.register("ivy@example.com")
        let linked = try await world.signIn(
            .google, subject: "g-ivy", email: "ivy@example.com", emailVerified: "true")
        #expect(linked.status == 200)
        #expect(linked.userGuid == ivy.userGuid)
    }

    @Test("a user lists, links and unlinks identities; the last way to log in stays")
    func listAndUnlink() async throws {
        let world = try await SignInWorld.make()
        let client = world.server.client
        let created = try await world.signIn(email: "gail@example.com", emailVerified: "true")
        let token = try #require(created.json["token"] as? String)
        let auth = [("Authorization", "Bearer \(token)")]
        let listed = try await client.send("GET", "/ff/me/identities", headers: auth)
        #expect(listed.status == 200)
        let items = try #require(listed.json["items"] as? [[String: Any]])
        #expect(items.count == 1)
        #expect(items.first?["provider"] as? String == "apple")
        #expect(items.first?["subject"] as? String == "001234.subject")
        #expect(items.first?["email"] as? String == "gail@example.com")
        #expect((items.first?["createdAt"] as? NSNumber)?.int64Value == world.clock.nowMilliseconds())
        #expect(items.first?["userGuid"] == nil)

        let last = try await client.send("DELETE", "/ff/me/identities/apple", headers: auth)
        #expect(last.status == 409)
        #expect(
            last.text
                == errorBody(
                    RoostError(
                        status: 409, code: .lastSignInMethod,
                        message:
                            "This is the account's last way to log in; set a password or link another identity first."
                    )))

        // Link Google while logged in, then Apple can go.
        let nonce = SignInWorld.makeNonce()
        let google = try await world.provider.issue(
            claims: world.claims(provider: .google, subject: "g-1", nonce: nonce))
        let linked = try await client.send(
            "POST", "/ff/me/identities/google", json: #"{"idToken":"\#(google)","nonce":"\#(nonce)"}"#,
            headers: auth)
        #expect(linked.status == 201, "\(linked.text)")
        #expect(linked.json["provider"] as? String == "google")
        #expect(try await client.send("DELETE", "/ff/me/identities/apple", headers: auth).status == 204)
        let gone = try await client.send("DELETE", "/ff/me/identities/apple", headers: auth)
        #expect(gone.status == 404)
        #expect(gone.json["code"] as? String == "identity_not_found")
        #expect(try await client.send("DELETE", "/ff/me/identities/google", headers: auth).status == 409)
        // Google's subject now logs in this account; Apple's makes a new one.
        #expect(try await world.signIn(.google, subject: "g-1").userGuid == created.userGuid)
        #expect(try await world.signIn().status == 201)

        // A subject linked to someone already cannot be linked again.
        let other = try await client.register("hank")
        let otherToken = try #require(other.json["token"] as? String)
        let again = SignInWorld.makeNonce()
        let taken = try await world.provider.issue(
            claims: world.claims(provider: .google, subject: "g-1", nonce: again))
        let refused = try await client.send(
            "POST", "/ff/me/identities/google", json: #"{"idToken":"\#(taken)","nonce":"\#(again)"}"#,
            headers: [("Authorization", "Bearer \(otherToken)")])
        #expect(refused.status == 409)
        #expect(refused.json["code"] as? String == "identity_taken")
        // An account with a password may drop its only identity.
        let apple = SignInWorld.makeNonce()
        let own = try await world.provider.issue(claims: world.claims(subject: "hank-apple", nonce: apple))
        let hankAuth = [("Authorization", "Bearer \(otherToken)")]
        #expect(
            try await client.send(
                "POST", "/ff/me/identities/apple", json: #"{"idToken":"\#(own)","nonce":"\#(apple)"}"#,
                headers: hankAuth
            ).status == 201)
        #expect(try await client.send("DELETE", "/ff/me/identities/apple", headers: hankAuth).status == 204)
        #expect(try await client.send("GET", "/ff/me/identities").status == 401)
    }

    @Test("administrators list and unlink anyone's identities; others get 403; the CLI lists them")
    func administrators() async throws {
        let directory = try await makeDataFolder()
        let admin = try await runRoost(
            ["users", "create", "dave", "--admin", "--data-dir", directory], input: "dave-password\n")
        #expect(admin.status == 0, "\(admin.errorOutput)")
        let world = try await SignInWorld.make(dataDirectory: directory)
        let client = world.server.client
        let alice = try await world.signIn(email: "alice@example.com", emailVerified: "true")
        let aliceGuid = try #require(alice.userGuid)
        let bob = try await client.register("bob")
        let bobAuth = [("Authorization", "Bearer \(try #require(bob.json["token"] as? String))")]
        let refused = try await client.send("GET", "/ff/admin/identities?user=\(aliceGuid)", headers: bobAuth)
        #expect(refused.status == 403)
        #expect(refused.json["code"] as? String == "admin_required")
        #expect(
            try await client.send("DELETE", "/ff/admin/identities/apple?user=\(aliceGuid)", headers: bobAuth)
                .status
                == 403)

        let daveAuth = [
            ("Authorization", "Bearer \(try await client.login("dave", password: "dave-password"))")
        ]
        let listed = try await client.send("GET", "/ff/admin/identities?user=\(aliceGuid)", headers: daveAuth)
        #expect(listed.status == 200)
        let items = try #require(listed.json["items"] as? [[String: Any]])
        #expect(items.first?["userGuid"] as? String == aliceGuid)
        #expect(try await client.send("GET", "/ff/admin/identities", headers: daveAuth).status == 400)

        let userName = try #require(alice.user?["userName"] as? String)
        let cli = try await runRoost(["users", "identities", userName, "--json", "--data-dir", directory])
        #expect(cli.status == 0, "\(cli.errorOutput)")
        let printed = try JSONSerialization.jsonObject(with: Data(cli.output.utf8)) as? [[String: Any]]
        #expect(printed?.first?["provider"] as? String == "apple")
        #expect(printed?.first?["subject"] as? String == "001234.subject")
        #expect(printed?.first?["userGuid"] as? String == aliceGuid)
        let none = try await runRoost(["users", "identities", "dave", "--data-dir", directory])
        #expect(none.output.contains("has no sign-in identities"))

        // Alice's only way in stays, even for an administrator.
        let kept = try await client.send(
            "DELETE", "/ff/admin/identities/apple?user=\(aliceGuid)", headers: daveAuth)
        #expect(kept.status == 409)
        #expect(kept.json["code"] as? String == "last_sign_in_method")

        // A deactivated account's identity logs nothing in.
        let deactivated = try await client.send(
            "PATCH", "/ff/resources/FFUser/\(aliceGuid)", json: #"{"active":false}"#, headers: daveAuth)
        #expect(deactivated.status == 200, "\(deactivated.text)")
        let inactive = try await world.signIn()
        #expect(inactive.status == 401)
        #expect(inactive.json["code"] as? String == "invalid_credentials")
    }
}
