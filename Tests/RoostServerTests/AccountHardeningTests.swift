import Foundation
import RoostCore
import RoostServer
import RoostStore
import RoostTestSupport
import Testing

/// Accounts against a hostile client (issue 13): names that pass for others, weak passwords,
/// system fields in bodies, the throttle, and sessions that must end.
@Suite("Account hardening")
struct AccountHardeningTests {
    /// A registration body with `name` JSON-escaped as given.
    private static func registration(_ name: String, password: String = "correct horse") -> String {
        #"{"userName":"\#(name)","password":"\#(password)"}"#
    }

    static let badNames: [(name: String, rule: String)] = [
        // One letter and 5000 combining marks is one character, but 10 KB.
        ("a" + String(repeating: "\\u0301", count: 5000), "length"),
        (String(repeating: "x", count: 65), "length"),
        ("\\u0301\\u0301\\u0301", "combining_mark"),
        ("bob.\\u0301", "combining_mark"),
        ("bob\\u0007", "characters"),
        ("bo\\u200Bb", "characters"),
        ("bob\\u202Eevil", "characters"),
        ("\\uFF41lice", "compatibility_characters"),
        ("\\uFB01sh", "compatibility_characters"),
        // Latin p, y, p, a, l with a Cyrillic а.
        ("p\\u0430ypal", "mixed_scripts"),
        ("\\u03BFmega", "mixed_scripts"),
    ]

    @Test("user names that are too big, invisible or look like another's are refused", arguments: badNames)
    func badUserNames(_ name: String, _ rule: String) async throws {
        let server = try await makeAccountServer()
        let response = try await server.client.send("POST", "/ff/register", json: Self.registration(name))
        #expect(response.status == 400)
        #expect(response.json["code"] as? String == "invalid_field")
        let details = response.json["details"] as? [String: Any]
        #expect(details?["field"] as? String == "userName")
        #expect(details?["rule"] as? String == rule, "\(response.text)")
        await server.stop()
    }

    @Test("user names are stored in NFC: a decomposed name is the composed one's account")
    func namesAreNormalised() async throws {
        let server = try await makeAccountServer()
        let decomposed = try await server.client.send(
            "POST", "/ff/register", json: Self.registration("Jose\\u0301"))
        #expect(decomposed.status == 201)
        let user = try #require(decomposed.json["user"] as? [String: Any])
        #expect(user["userName"] as? String == "Jos\u{E9}")
        #expect(Array((user["userName"] as? String ?? "").unicodeScalars).count == 4)
        let composed = try await server.client.send(
            "POST", "/ff/register", json: Self.registration("jos\\u00E9"))
        #expect(composed.status == 409)
        #expect((composed.json["details"] as? [String: Any])?["field"] as? String == "userName")
        let login = try await server.client.send(
            "POST", "/ff/login", json: #"{"userName":"JOS\u00C9","password":"correct horse"}"#)
        #expect(login.status == 200)
        // One script, or scripts without look-alikes in each other, are fine.
        for name in ["\\u0430\\u043D\\u043D\\u0430", "tanaka\\u7530\\u4E2D", "\\u00E9lodie-2"] {
            let response = try await server.client.send("POST", "/ff/register", json: Self.registration(name))
            #expect(response.status == 201, "\(name): \(response.text)")
        }
        await server.stop()
    }

    static let weakPasswords: [(password: String, rule: String)] = [
        ("        ", "whitespace_only"),
        ("\\t\\t\\t\\t \\n\\n\\n", "whitespace_only"),
        ("aaaaaaaaaaaa", "repeated_character"),
        ("12345678", "common"),
        ("Password1", "common"),
        ("qwertyuiop", "common"),
        ("TrustNo1", "common"),
    ]

    @Test("weak passwords are refused with the rule they break", arguments: weakPasswords)
    func weakPasswordsAreRefused(_ password: String, _ rule: String) async throws {
        let server = try await makeAccountServer()
        let response = try await server.client.send(
            "POST", "/ff/register", json: Self.registration("carol", password: password))
        #expect(response.status == 400)
        #expect(response.json["code"] as? String == "weak_password")
        #expect((response.json["details"] as? [String: Any])?["rule"] as? String == rule, "\(response.text)")
        // A password change checks the same rules.
        let alice = try await server.client.register("alice")
        let token = try #require(alice.json["token"] as? String)
        let change = try await server.client.send(
            "POST", "/ff/password",
            json: #"{"currentPassword":"correct horse","newPassword":"\#(password)"}"#,
            headers: [("X-Token", token)])
        #expect(change.status == 400)
        #expect((change.json["details"] as? [String: Any])?["rule"] as? String == rule)
        await server.stop()
    }

    static let systemFields: [(body: String, field: String)] = [
        (#""ffACL":{"readUsers":["*"]}"#, "ffACL"),
        (#""admin":true"#, "admin"),
        (#""active":false"#, "active"),
        (#""createdBy":"someone""#, "createdBy"),
        (#""version":7"#, "version"),
        (
            #""avatar":{"blob":{"contentType":"image/png","size":3,"sha256":"\#(String(repeating: "ab", count: 32))","url":"/x"}}"#,
            "avatar"
        ),
    ]

    @Test(
        "registration refuses system fields: access lists, flags, metadata, forged blobs",
        arguments: systemFields)
    func registrationRefusesSystemFields(_ body: String, _ field: String) async throws {
        let server = try await makeAccountServer()
        let response = try await server.client.send(
            "POST", "/ff/register", json: #"{"userName":"mallory","password":"correct horse",\#(body)}"#)
        #expect(response.status == 400)
        #expect(response.json["code"] as? String == "read_only_field")
        #expect((response.json["details"] as? [String: Any])?["field"] as? String == field)
        let login = try await server.client.send(
            "POST", "/ff/login", json: #"{"userName":"mallory","password":"correct horse"}"#)
        #expect(login.status == 401, "nothing was stored")
        await server.stop()
    }

    /// Registrations before the fix could store an `ffACL` field in a user's document: single reads
    /// honoured it while lists did not. Only the access-list column counts now, in both.
    @Test("an ffACL field stored in a document is no access list")
    func storedACLFieldIsIgnored() async throws {
        let world = try await PermissionWorld.make()
        let alice = world.guids[.owner]!
        let objects = try await TestBackend.openStorage(for: world.server.dataDirectory).objectStore
        let document =
            #"{"guid":"old","ffUrl":"/ff/resources/Diary/old","createdBy":"\#(alice)","createdAt":1,"updatedBy":"\#(alice)","updatedAt":1,"version":1,"ffACL":{"readUsers":["*"]}}"#
        try await objects.insert(
            StoredObject(
                collection: "Diary", guid: "old", document: Array(document.utf8), createdBy: alice,
                createdAt: 1, updatedBy: alice, updatedAt: 1, version: 1))
        #expect(try await world.send(.other, "GET", "/ff/resources/Diary/old").status == 404)
        #expect(PermissionWorld.guids(try await world.send(.other, "GET", "/ff/resources/Diary")).isEmpty)
        #expect(try await world.send(.owner, "GET", "/ff/resources/Diary/old").status == 200)
        await world.server.stop()
    }

    @Test("the throttle counts an account once, whether it is named by userName or by email")
    func throttlePerAccount() async throws {
        let server = try await makeAccountServer(
            limits: LoginThrottle.Limits(perAccount: 4, perAddress: 100, window: 60_000))
        _ = try await server.client.register("alice", extra: #","email":"alice@example.com""#)
        for identifier in [#""userName":"alice""#, #""email":"alice@example.com""#] {
            for _ in 0..<2 {
                let failed = try await server.client.send(
                    "POST", "/ff/login", json: #"{\#(identifier),"password":"wrong password"}"#)
                #expect(failed.status == 401)
            }
        }
        for identifier in [#""userName":"alice""#, #""email":"ALICE@example.com""#] {
            let blocked = try await server.client.send(
                "POST", "/ff/login", json: #"{\#(identifier),"password":"correct horse"}"#)
            #expect(blocked.status == 429, "\(identifier)")
            #expect(blocked.json["code"] as? String == "too_many_attempts")
        }
        // An unknown name is counted on its own and answers alike: no oracle.
        var answers: [String] = []
        for _ in 0..<5 {
            let response = try await server.client.send(
                "POST", "/ff/login", json: #"{"userName":"ghost","password":"wrong password"}"#)
            answers.append("\(response.status) \(response.json["code"] as? String ?? "")")
        }
        #expect(answers == Array(repeating: "401 invalid_credentials", count: 4) + ["429 too_many_attempts"])
        await server.stop()
    }

    @Test("wrong current passwords on a password change count against the account's throttle")
    func passwordChangeIsThrottled() async throws {
        let server = try await makeAccountServer(
            limits: LoginThrottle.Limits(perAccount: 3, perAddress: 100, window: 60_000))
        let alice = try await server.client.register("alice")
        let stolen = try #require(alice.json["token"] as? String)
        for _ in 0..<2 {
            let guess = try await server.client.send(
                "POST", "/ff/password",
                json: #"{"currentPassword":"wrong password","newPassword":"battery staple"}"#,
                headers: [("X-Token", stolen)])
            #expect(guess.status == 401)
            #expect(guess.json["code"] as? String == "invalid_credentials")
        }
        // The login's guesses and the password change's share one count.
        let login = try await server.client.send(
            "POST", "/ff/login", json: #"{"userName":"alice","password":"wrong password"}"#)
        #expect(login.status == 401)
        let blocked = try await server.client.send(
            "POST", "/ff/password",
            json: #"{"currentPassword":"correct horse","newPassword":"battery staple"}"#,
            headers: [("X-Token", stolen)])
        #expect(blocked.status == 429)
        #expect(blocked.json["code"] as? String == "too_many_attempts")
        await server.stop()
    }

    @Test("logins without a device id each keep their own session, up to a bound")
    func devicelessLogins() async throws {
        let server = try await makeAccountServer()
        _ = try await server.client.register("alice")
        let browser = try await server.client.login("alice")
        let curl = try await server.client.login("alice")
        for token in [browser, curl] {
            let session = try await server.client.send("GET", "/ff/tokens", headers: [("X-Token", token)])
            #expect(session.status == 200)
        }
        // A named device is still replaced by its next login.
        let phone = try await server.client.login("alice", device: "phone")
        _ = try await server.client.login("alice", device: "phone")
        #expect(
            try await server.client.send("GET", "/ff/tokens", headers: [("X-Token", phone)]).status == 401)
        // Register made one device-less session; 20 more logins end the oldest ones only.
        var tokens = [browser, curl]
        for _ in 0..<(AccountService.maximumUnnamedSessions - 1) {
            tokens.append(try await server.client.login("alice"))
        }
        #expect(
            try await server.client.send("GET", "/ff/tokens", headers: [("X-Token", browser)]).status == 401)
        let listed = try await server.client.send("GET", "/ff/tokens", headers: [("X-Token", tokens.last!)])
        let devices = (listed.json["items"] as? [[String: Any]] ?? []).compactMap {
            $0["deviceId"] as? String
        }
        #expect(devices.filter { $0 == "default" }.count == AccountService.maximumUnnamedSessions)
        #expect(devices.filter { $0 == "phone" }.count == 1)
        await server.stop()
    }

    @Test("a password change ends every other session, and the old password stops working")
    func passwordChangeRevokes() async throws {
        let server = try await makeAccountServer()
        _ = try await server.client.register("alice")
        let laptop = try await server.client.login("alice", device: "laptop")
        let phone = try await server.client.login("alice", device: "phone")
        let changed = try await server.client.send(
            "POST", "/ff/password",
            json: #"{"currentPassword":"correct horse","newPassword":"battery staple"}"#,
            headers: [("X-Token", laptop)])
        #expect(changed.status == 200)
        #expect(
            try await server.client.send("GET", "/ff/tokens", headers: [("X-Token", phone)]).status == 401)
        #expect(
            try await server.client.send("GET", "/ff/tokens", headers: [("X-Token", laptop)]).status == 200)
        let old = try await server.client.send(
            "POST", "/ff/login", json: #"{"userName":"alice","password":"correct horse"}"#)
        #expect(old.status == 401)
        await server.stop()
    }

    @Test("deactivation deletes the user's tokens in the same write; reactivation revives none")
    func deactivationRevokes() async throws {
        let world = try await PermissionWorld.make()
        let bob = world.guids[.other]!
        let stolen = world.tokens[.other]!
        let sessions = "/ff/admin/sessions?user=\(bob)"
        let before = try await world.send(.admin, "GET", sessions)
        #expect((before.json["items"] as? [[String: Any]])?.count == 1)
        let off = try await world.send(
            .admin, "PATCH", "/ff/resources/FFUser/\(bob)", json: #"{"active":false}"#)
        #expect(off.status == 200)
        let after = try await world.send(.admin, "GET", sessions)
        #expect((after.json["items"] as? [[String: Any]])?.count == 0, "\(after.text)")
        let on = try await world.send(
            .admin, "PATCH", "/ff/resources/FFUser/\(bob)", json: #"{"active":true}"#)
        #expect(on.status == 200)
        let replayed = try await world.server.client.send(
            "GET", "/ff/session", headers: [("X-Token", stolen)])
        #expect(replayed.text == #"{"loggedIn":false}"#)
        let refused = try await world.server.client.send(
            "GET", "/ff/resources/FFUser", headers: [("X-Token", stolen)])
        #expect(refused.status == 401)
        #expect(refused.json["code"] as? String == "invalid_token")
        // Logging in again works and makes a new session.
        _ = try await world.server.client.login("bob")
        await world.server.stop()
    }
}
