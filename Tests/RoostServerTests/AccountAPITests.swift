import Foundation
import RoostCore
import RoostTestSupport
import Testing

@Suite("Accounts, tokens and sessions")
struct AccountAPITests {
    @Test("register answers 201 with the user and a token, never the password")
    func register() async throws {
        let server = try await makeAccountServer()
        let response = try await server.client.register(
            "alice", extra: #","email":"Alice@Example.com","firstName":"Alice","deviceId":"iphone""#)
        #expect(response.status == 201)
        let user = try #require(response.json["user"] as? [String: Any])
        #expect(user["userName"] as? String == "alice")
        #expect(user["email"] as? String == "Alice@Example.com")
        #expect(user["active"] as? Bool == true)
        #expect(user["createdBy"] as? String == user["guid"] as? String)
        #expect(user["password"] == nil)
        #expect(user["deviceId"] == nil)
        #expect((response.json["token"] as? String)?.count == 43)
        #expect(!response.text.contains("correct horse"))
        #expect(!response.text.contains("argon2"))
        // The FFUser object is readable by logged-in users through the objects API, without any hash.
        let stored = try await server.client.send(
            "GET", "/ff/resources/FFUser/\(user["guid"] as! String)",
            headers: [("X-Token", response.json["token"] as! String)])
        #expect(stored.status == 200)
        let anonymous = try await server.client.send("GET", "/ff/resources/FFUser/\(user["guid"] as! String)")
        #expect(anonymous.status == 404)
        #expect(!stored.text.contains("argon2"))
        await server.stop()
    }

    static let badRegistrations: [APIScenario] = [
        APIScenario(
            name: "no userName", method: "POST", path: "/ff/register", body: #"{"password":"correct horse"}"#,
            status: 400, code: "missing_field"),
        APIScenario(
            name: "no password", method: "POST", path: "/ff/register", body: #"{"userName":"carol"}"#,
            status: 400, code: "missing_field"),
        APIScenario(
            name: "userName with a space", method: "POST", path: "/ff/register",
            body: #"{"userName":"a b","password":"correct horse"}"#, status: 400, code: "invalid_field"),
        APIScenario(
            name: "userName with @ that is no address", method: "POST", path: "/ff/register",
            body: #"{"userName":"a@b","password":"correct horse"}"#, status: 400, code: "invalid_field"),
        APIScenario(
            name: "numeric userName", method: "POST", path: "/ff/register",
            body: #"{"userName":5,"password":"correct horse"}"#, status: 400, code: "invalid_field"),
        APIScenario(
            name: "bad email", method: "POST", path: "/ff/register",
            body: #"{"userName":"carol","email":"nope","password":"correct horse"}"#, status: 400,
            code: "invalid_field"),
        APIScenario(
            name: "short password", method: "POST", path: "/ff/register",
            body: #"{"userName":"carol","password":"short"}"#, status: 400,
            exactBody:
                #"{"status":400,"code":"weak_password","message":"The password must have at least 8 characters.","details":{"rule":"min_length"}}"#
        ),
        APIScenario(
            name: "password equal to the name", method: "POST", path: "/ff/register",
            body: #"{"userName":"Carolina","password":"carolina"}"#,
            status: 400,
            exactBody:
                #"{"status":400,"code":"weak_password","message":"The password must not be the user name.","details":{"rule":"not_user_name"}}"#
        ),
        APIScenario(
            name: "admin flag", method: "POST", path: "/ff/register",
            body: #"{"userName":"carol","password":"correct horse","admin":true}"#, status: 400,
            code: "read_only_field"),
        APIScenario(
            name: "metadata", method: "POST", path: "/ff/register",
            body: #"{"userName":"carol","password":"correct horse","guid":"x"}"#, status: 400,
            code: "read_only_field"),
        APIScenario(
            name: "taken userName in other case", method: "POST", path: "/ff/register",
            body: #"{"userName":"ALICE","password":"correct horse"}"#,
            status: 409,
            exactBody:
                #"{"status":409,"code":"conflict","message":"That userName is already registered; choose another or log in.","details":{"field":"userName"}}"#
        ),
        APIScenario(
            name: "taken email in other case", method: "POST", path: "/ff/register",
            body: #"{"userName":"other","email":"ALICE@example.COM","password":"correct horse"}"#,
            status: 409, code: "conflict"),
        APIScenario(
            name: "users are not created through the objects API", method: "POST",
            path: "/ff/resources/FFUser", body: #"{"userName":"x"}"#, status: 403, code: "forbidden"),
    ]

    @Test("registration refuses bad input with a clear error and stores nothing", arguments: badRegistrations)
    func registrationErrors(_ scenario: APIScenario) async throws {
        try await expectRegistrationRefused(scenario)
    }

    @Test("login by user name, email, FatFractal's credential body and HTTP Basic")
    func loginShapes() async throws {
        let server = try await makeAccountServer()
        _ = try await server.client.register("alice", extra: #","email":"alice@example.com""#)
        let bodies = [
            #"{"userName":"alice","password":"correct horse"}"#,
            #"{"userName":"ALICE","password":"correct horse"}"#,
            #"{"email":"Alice@Example.com","password":"correct horse"}"#,
            #"{"credential":{"userName":"alice","password":"correct horse"}}"#,
        ]
        for body in bodies {
            let response = try await server.client.send("POST", "/ff/login", json: body)
            #expect(response.status == 200, "\(body)")
            #expect((response.json["user"] as? [String: Any])?["userName"] as? String == "alice")
        }
        let basic = "Basic " + Data("alice:correct horse".utf8).base64EncodedString()
        let viaBasic = try await server.client.send("POST", "/ff/login", headers: [("Authorization", basic)])
        #expect(viaBasic.status == 200)
        let token = try #require(viaBasic.json["token"] as? String)
        // Seed 002: post with the bearer token from the Basic login.
        let created = try await server.client.send(
            "POST", "/ff/resources/Acronym", json: #"{"short":"OMG"}"#,
            headers: [("Authorization", "Bearer \(token)")])
        #expect(created.status == 201)
        #expect(
            created.json["createdBy"] as? String == (viaBasic.json["user"] as? [String: Any])?["guid"]
                as? String)
        await server.stop()
    }

    @Test("a failed login says the same whether or not the user exists")
    func noUserEnumeration() async throws {
        let server = try await makeAccountServer()
        _ = try await server.client.register("alice")
        let wrongPassword = try await server.client.send(
            "POST", "/ff/login", json: #"{"userName":"alice","password":"wrong password"}"#)
        let unknownUser = try await server.client.send(
            "POST", "/ff/login", json: #"{"userName":"nobody","password":"wrong password"}"#)
        for response in [wrongPassword, unknownUser] {
            #expect(response.status == 401)
            #expect(
                response.text
                    == #"{"status":401,"code":"invalid_credentials","message":"Invalid user name or password.","details":{}}"#
            )
        }
        let basic = "Basic " + Data("nobody:wrong password".utf8).base64EncodedString()
        let viaBasic = try await server.client.send("POST", "/ff/login", headers: [("Authorization", basic)])
        #expect(viaBasic.status == 401)
        #expect(viaBasic.header("WWW-Authenticate") == #"Basic realm="roost", charset="UTF-8""#)
        #expect(viaBasic.text == wrongPassword.text)
        // A program that handles the 401 itself opts out of the challenge.
        let fromProgram = try await server.client.send(
            "POST", "/ff/login", headers: [("Authorization", basic), ("X-Requested-With", "RoostClient")])
        #expect(fromProgram.status == 401)
        #expect(fromProgram.header("WWW-Authenticate") == nil)
        #expect(fromProgram.text == wrongPassword.text)
        await server.stop()
    }

    @Test("repeated failures are throttled with 429 and Retry-After; a success resets the account")
    func throttling() async throws {
        let clock = ManualWallClock()
        let server = try await makeAccountServer(
            clock: clock, limits: LoginThrottle.Limits(perAccount: 3, perAddress: 100, window: 60_000))
        _ = try await server.client.register("alice")
        for _ in 0..<3 {
            #expect(
                try await server.client.send(
                    "POST", "/ff/login", json: #"{"userName":"alice","password":"wrong password"}"#
                ).status == 401)
        }
        let blocked = try await server.client.send(
            "POST", "/ff/login", json: #"{"userName":"alice","password":"correct horse"}"#)
        #expect(blocked.status == 429)
        #expect(blocked.json["code"] as? String == "too_many_attempts")
        #expect(blocked.header("Retry-After") == "60")
        // Unknown accounts are throttled the same way, so throttling reveals nothing either.
        for _ in 0..<3 {
            _ = try await server.client.send(
                "POST", "/ff/login", json: #"{"userName":"ghost","password":"wrong password"}"#)
        }
        #expect(
            try await server.client.send(
                "POST", "/ff/login", json: #"{"userName":"ghost","password":"wrong password"}"#
            ).status == 429)

        clock.advance(seconds: 61)
        _ = try await server.client.login("alice")
        for _ in 0..<2 {
            _ = try await server.client.send(
                "POST", "/ff/login", json: #"{"userName":"alice","password":"wrong password"}"#)
        }
        // Two failures after the reset are under the limit of three.
        _ = try await server.client.login("alice")
        await server.stop()
    }

    @Test("the token resource of seed 003: create, check, revoke, expire")
    func tokenResource() async throws {
        let clock = ManualWallClock()
        let server = try await makeAccountServer(clock: clock)
        _ = try await server.client.register("alice", extra: #","email":"alice@example.com""#)
        _ = try await server.client.register("bob")
        let created = try await server.client.send(
            "POST", "/ff/tokens",
            json: #"{"email":"alice@example.com","password":"correct horse","manufacturerId":"ipad-7"}"#)
        #expect(created.status == 201)
        let id = try #require(created.json["id"] as? String)
        let secret = try #require(created.json["token"] as? String)
        #expect(created.json["deviceId"] as? String == "ipad-7")
        #expect(created.json["expiresAt"] as? Int == 1_790_000_000_000 + 30 * 86_400_000)
        #expect(created.header("Location") == "/ff/tokens/\(id)")

        let checked = try await server.client.send("GET", "/ff/tokens/\(id)", headers: [("X-Token", secret)])
        #expect(checked.status == 200)
        #expect(checked.json["token"] == nil)
        #expect(checked.json["current"] as? Bool == true)
        let bob = try await server.client.login("bob")
        #expect(
            try await server.client.send("GET", "/ff/tokens/\(id)", headers: [("X-Token", bob)]).status == 404
        )
        #expect(try await server.client.send("GET", "/ff/tokens/\(id)").status == 401)

        // Sliding renewal: using the token after two hours moves its expiry.
        clock.advance(seconds: 7200)
        let renewed = try await server.client.send("GET", "/ff/tokens/\(id)", headers: [("X-Token", secret)])
        #expect(renewed.json["expiresAt"] as? Int == 1_790_000_000_000 + 7_200_000 + 30 * 86_400_000)

        let second = try await server.client.login("alice", device: "phone")
        #expect(
            try await server.client.send("DELETE", "/ff/tokens/\(id)", headers: [("X-Token", second)]).status
                == 204)
        #expect(
            try await server.client.send("GET", "/ff/tokens/\(id)", headers: [("X-Token", second)]).status
                == 404)
        let revoked = try await server.client.send("GET", "/ff/session", headers: [("X-Token", secret)])
        #expect(revoked.text == #"{"loggedIn":false}"#)

        // Thirty idle days later the phone's token has expired.
        clock.advance(seconds: 31 * 86_400)
        let expired = try await server.client.send(
            "GET", "/ff/resources/Post", headers: [("Authorization", "Bearer \(second)")])
        #expect(expired.status == 401)
        #expect(expired.json["code"] as? String == "invalid_token")
        await server.stop()
    }

    @Test("singleDevice: logging in on the iPad ends the iPhone's session")
    func singleDevicePolicy() async throws {
        let server = try await makeAccountServer(policy: .singleDevice)
        _ = try await server.client.register("alice")
        let phone = try await server.client.login("alice", device: "iphone")
        let pad = try await server.client.login("alice", device: "ipad")
        #expect(
            try await server.client.send("GET", "/ff/session", headers: [("X-Token", phone)]).text
                == #"{"loggedIn":false}"#)
        #expect(
            try await server.client.send("GET", "/ff/session", headers: [("X-Token", pad)]).json["loggedIn"]
                as? Bool == true)
        let sessions = try await server.client.send("GET", "/ff/tokens", headers: [("X-Token", pad)])
        #expect((sessions.json["items"] as? [Any])?.count == 1)
        await server.stop()
    }

    @Test("perDevice: a new login replaces that device's token only; concurrent logins leave one")
    func perDevicePolicy() async throws {
        let server = try await makeAccountServer()
        _ = try await server.client.register("alice", extra: #","deviceId":"setup""#)
        let first = try await server.client.login("alice", device: "iphone")
        let pad = try await server.client.login("alice", device: "ipad")
        let second = try await server.client.login("alice", device: "iphone")
        #expect(
            try await server.client.send("GET", "/ff/session", headers: [("X-Token", first)]).text
                == #"{"loggedIn":false}"#)
        #expect(
            try await server.client.send("GET", "/ff/session", headers: [("X-Token", pad)]).json["loggedIn"]
                as? Bool == true)
        #expect(
            try await server.client.send("GET", "/ff/session", headers: [("X-Token", second)]).json[
                "loggedIn"] as? Bool == true)

        let client = server.client
        try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<8 { group.addTask { try await client.login("alice", device: "watch") } }
            try await group.waitForAll()
        }
        let sessions = try await server.client.send("GET", "/ff/tokens", headers: [("X-Token", pad)])
        let devices = (sessions.json["items"] as? [[String: Any]] ?? []).compactMap {
            $0["deviceId"] as? String
        }
        #expect(devices.sorted() == ["ipad", "iphone", "setup", "watch"])
        await server.stop()
    }

    @Test("session check and logout, seed 004")
    func sessionAndLogout() async throws {
        let server = try await makeAccountServer()
        _ = try await server.client.register("alice")
        #expect(try await server.client.send("GET", "/ff/session").text == #"{"loggedIn":false}"#)
        let token = try await server.client.login("alice")
        let session = try await server.client.send("GET", "/ff/session", headers: [("X-Token", token)])
        #expect(session.json["loggedIn"] as? Bool == true)
        #expect((session.json["user"] as? [String: Any])?["userName"] as? String == "alice")
        #expect(
            try await server.client.send("POST", "/ff/logout", headers: [("X-Token", token)]).text
                == #"{"loggedOut":true}"#)
        #expect(
            try await server.client.send("POST", "/ff/logout", headers: [("X-Token", token)]).text
                == #"{"loggedOut":false}"#)
        #expect(try await server.client.send("POST", "/ff/logout").text == #"{"loggedOut":false}"#)
        let after = try await server.client.send(
            "POST", "/ff/resources/Post", json: "{}", headers: [("X-Token", token)])
        #expect(after.status == 401)
        #expect(after.header("WWW-Authenticate") == #"Bearer realm="roost", error="invalid_token""#)
        await server.stop()
    }

    @Test(
        "bad credentials on an ordinary request are refused, never treated as anonymous",
        arguments: [
            ("Authorization", "Bearer not-a-token"), ("X-Token", "not-a-token"),
            ("Authorization", "Basic YWxpY2U6Y29ycmVjdCBob3JzZQ=="),
            ("Authorization", "Token abc"), ("X-Token", String(repeating: "x", count: 5000)),
        ])
    func badCredentials(_ name: String, _ value: String) async throws {
        let server = try await makeAccountServer()
        let response = try await server.client.send(
            "POST", "/ff/resources/Post", json: #"{"a":1}"#, headers: [(name, value)])
        #expect(response.status == 401)
        #expect(response.json["code"] as? String == "invalid_token")
        #expect(
            try await server.client.send("GET", "/ff/resources/Post?total=true").json["total"] as? Int == 0)
        await server.stop()
    }

    @Test("changing the password keeps this session and ends the others")
    func passwordChange() async throws {
        let server = try await makeAccountServer()
        _ = try await server.client.register("alice")
        let phone = try await server.client.login("alice", device: "phone")
        let laptop = try await server.client.login("alice", device: "laptop")
        let wrong = try await server.client.send(
            "POST", "/ff/password", json: #"{"currentPassword":"nope nope","newPassword":"battery staple"}"#,
            headers: [("X-Token", phone)])
        #expect(wrong.status == 401)
        let weak = try await server.client.send(
            "POST", "/ff/password", json: #"{"currentPassword":"correct horse","newPassword":"short"}"#,
            headers: [("X-Token", phone)])
        #expect(weak.json["code"] as? String == "weak_password")
        let changed = try await server.client.send(
            "POST", "/ff/password",
            json: #"{"currentPassword":"correct horse","newPassword":"battery staple"}"#,
            headers: [("X-Token", phone)])
        #expect(changed.text == #"{"changed":true}"#)
        #expect(
            try await server.client.send("GET", "/ff/session", headers: [("X-Token", phone)]).json["loggedIn"]
                as? Bool == true)
        #expect(
            try await server.client.send("GET", "/ff/session", headers: [("X-Token", laptop)]).text
                == #"{"loggedIn":false}"#)
        #expect(
            try await server.client.send(
                "POST", "/ff/login", json: #"{"userName":"alice","password":"correct horse"}"#
            ).status == 401)
        _ = try await server.client.login("alice", password: "battery staple")
        #expect(try await server.client.send("POST", "/ff/password", json: "{}").status == 401)
        await server.stop()
    }

    @Test("no password, hash or token reaches the access log")
    func secretsStayOutOfTheLog() async throws {
        let log = LogCapture()
        let server = try await makeAccountServer(log: log)
        let registered = try await server.client.register("alice")
        let token = try #require(registered.json["token"] as? String)
        _ = try await server.client.send(
            "POST", "/ff/login", json: #"{"userName":"alice","password":"wrong password"}"#)
        _ = try await server.client.send("GET", "/ff/session?token=\(token)", headers: [("X-Token", token)])
        await server.stop()
        let text = log.text
        #expect(text.contains("POST /ff/register 201"))
        #expect(text.contains("GET /ff/session?token=REDACTED 200"))
        for secret in [token, "correct horse", "wrong password", "argon2"] {
            #expect(!text.contains(secret), "\(secret) in the log")
        }
    }
}
