import Foundation
import RoostCore
import RoostHTTP
import RoostServer
import RoostTestSupport
import Testing

/// FatFractal's `system` user (issue 32, item 5): HTTP Basic with the password the operator gave
/// the server is an administrator, and `ff.getActiveUser()` is `system` to the scripts it calls.
@Suite("The system user")
struct SystemUserTests {
    /// What DataImport's README sends: `curl -H "Content-Type: application/octet-stream"
    /// --data @thing.json -u system:… …/ff/ext/simpleImport`.
    static let things = #"[{"guid":"t1","name":"one"},{"guid":"t2","name":"two"}]"#

    @Test func dataImportRunsAsTheSystemUser() async throws {
        let server = try await MetadataApp.makeServer()
        defer { Task { await server.stop() } }
        let answer = try await server.client.send(
            "POST", "/ff/ext/simpleImport",
            headers: [("Content-Type", "application/octet-stream"), MetadataApp.basic()],
            body: Array(Self.things.utf8))
        #expect(answer.status == 200, "\(answer.text)")
        #expect(answer.json["statusMessage"] as? String == "Added 2 new objects")
        let listed = try await server.client.send("GET", "/ff/resources/Thing")
        let items = try #require(listed.json["items"] as? [[String: Any]], "\(listed.text)")
        #expect(items.map { $0["guid"] as? String } == ["t1", "t2"])
        #expect(items.map { $0["createdBy"] as? String } == ["system", "system"])
        // Anyone else is turned away by the script's own check, as on FatFractal.
        let anonymous = try await server.client.send(
            "POST", "/ff/ext/simpleImport", headers: [("Content-Type", "application/octet-stream")],
            body: Array(Self.things.utf8))
        #expect(anonymous.status == 403)
        #expect(anonymous.json["statusMessage"] as? String == "Nope")
        let alice = try await server.client.fatFractalRegister("alice")
        let user = try await server.client.ff("POST", "/ff/ext/simpleImport", Self.things, alice.authHeaders)
        #expect(user.status == 403)
        #expect(user.json["statusMessage"] as? String == "Nope")
    }

    @Test func theSystemUserIsAnAdministratorNoRuleStops() async throws {
        let server = try await MetadataApp.makeServer()
        defer { Task { await server.stop() } }
        // Thing's rules are all `none`.
        let created = try await server.client.send(
            "POST", "/ff/resources/Thing", json: #"{"name":"by hand"}"#, headers: [MetadataApp.basic()])
        #expect(created.status == 201, "\(created.text)")
        #expect(created.json["createdBy"] as? String == "system")
        let collections = try await server.client.send(
            "GET", "/ff/admin/collections", headers: [MetadataApp.basic()])
        #expect(collections.status == 200, "\(collections.text)")
    }

    @Test func aWrongPasswordAndNoSystemPasswordAreTheSameRefusal() async throws {
        let configured = try await MetadataApp.makeServer()
        defer { Task { await configured.stop() } }
        let unconfigured = try await MetadataApp.makeServer(systemPassword: nil)
        defer { Task { await unconfigured.stop() } }
        var answers: [TestResponse] = []
        for (server, password) in [
            (configured, "not the password at all"), (unconfigured, "not the password at all"),
            (unconfigured, MetadataApp.systemPassword),
        ] {
            answers.append(
                try await server.client.send(
                    "GET", "/ff/resources/Thing", headers: [MetadataApp.basic("system", password)]))
        }
        for answer in answers {
            #expect(answer.status == 401)
            #expect(
                answer.text
                    == #"{"status":401,"code":"invalid_credentials","message":"Invalid user name or password.","details":{}}"#
            )
            // Never a Basic challenge: no browser is asked for, nor keeps, the system password.
            #expect(answer.header("WWW-Authenticate") == #"Bearer realm="roost""#)
        }
        // No session is issued for the system user: it sends its password with each request.
        let login = try await configured.client.ff(
            "POST", "/ff/login",
            #"{"credential":{"userName":"system","password":"\#(MetadataApp.systemPassword)"}}"#)
        #expect(login.status == 401)
        #expect(login.json["code"] as? String == "invalid_credentials")
        // Basic for anyone else is still refused on the API, as before.
        let other = try await configured.client.send(
            "GET", "/ff/resources/Thing", headers: [MetadataApp.basic("alice", "whatever password")])
        #expect(other.status == 401)
        #expect(other.json["code"] as? String == "invalid_token")
    }

    @Test("a browser's request with the system password is refused (CSRF): Origin or Sec-Fetch-Site")
    func browsersAreRefusedTheSystemUser() async throws {
        let server = try await MetadataApp.makeServer()
        defer { Task { await server.stop() } }
        for header in [
            ("Origin", "https://evil.example"), ("Sec-Fetch-Site", "cross-site"),
            ("Sec-Fetch-Site", "same-origin"),
        ] {
            let answer = try await server.client.send(
                "POST", "/ff/metadata", json: #"{"ffdl":"SET AllowNewCollections false"}"#,
                headers: [MetadataApp.basic(), header])
            #expect(answer.status == 403, "\(header): \(answer.text)")
            #expect(answer.json["code"] as? String == "forbidden")
        }
        let metadata = try await server.client.send("GET", "/ff/metadata", headers: [MetadataApp.basic()])
        #expect(
            (metadata.json["settings"] as? [String: Any])?["AllowNewCollections"] as? String == "true",
            "\(metadata.text)")
    }

    @Test func guessingTheSystemPasswordIsThrottled() async throws {
        let server = try await MetadataApp.makeServer()
        defer { Task { await server.stop() } }
        for attempt in 1...5 {
            let wrong = try await server.client.send(
                "GET", "/ff/metadata", headers: [MetadataApp.basic("system", "guess number \(attempt) here")])
            #expect(wrong.status == 401)
        }
        // The right password waits too: the throttle says nothing about which guess was right.
        let right = try await server.client.send("GET", "/ff/metadata", headers: [MetadataApp.basic()])
        #expect(right.status == 429)
        #expect(right.json["code"] as? String == "too_many_attempts")
    }

    @Test func outsideAdminAllowTheSystemUserIsRefusedBeforeItsPasswordIsChecked() async throws {
        let server = try await MetadataApp.makeServer { configuration in
            configuration.adminAllowed = try? TrustedProxies("10.0.0.0/8")
        }
        defer { Task { await server.stop() } }
        for password in [MetadataApp.systemPassword, "not the password at all"] {
            let answer = try await server.client.send(
                "GET", "/ff/resources/Thing", headers: [MetadataApp.basic("system", password)])
            #expect(answer.status == 403)
            #expect(answer.json["code"] as? String == "address_not_allowed")
        }
        // No failure was counted: the right password works from an allowed address (none here),
        // and anonymous reads go on.
        #expect(try await server.client.send("GET", "/ff/resources/Thing").status == 200)
    }

    @Test func roostServeReadsTheSystemPasswordFromAFile() async throws {
        let directory = TestServer.makeTemporaryDirectory()
        if TestBackend.current == .postgres { _ = try await TestBackend.databaseURL(for: directory) }
        let file = directory + "-system-password"
        // As `openssl rand -base64 24 > file` leaves it: a final newline that is not the password's.
        try Data("\(MetadataApp.systemPassword)\n".utf8).write(to: URL(fileURLWithPath: file))
        let server = try RoostProcess(dataDirectory: directory, arguments: ["--system-password-file", file])
        let client = TestHTTPClient(port: server.port)
        let admin = try await client.send(
            "GET", "/ff/admin/collections", headers: [MetadataApp.basic()])
        #expect(admin.status == 200, "\(admin.text)")
        #expect(try await server.stop(signal: SIGTERM) == 0)
        try Data("systemsystem\n".utf8).write(to: URL(fileURLWithPath: file))
        let short = try await runRoost(["serve", "--port", "0", "--system-password-file", file])
        #expect(short.status == 64)
        #expect(
            short.errorOutput.contains("--system-password-file: the password must be 16 to 1024 bytes long"),
            "\(short.errorOutput)")
        let help = try await runRoost(["serve", "--help"])
        #expect(help.output.contains("--system-password-file PATH"))
    }

    @Test func aShortSystemPasswordStopsTheServerFromStarting() async throws {
        await #expect(throws: SystemPasswordError.self) {
            _ = try await MetadataApp.makeServer(systemPassword: "systemsystem")
        }
    }
}
