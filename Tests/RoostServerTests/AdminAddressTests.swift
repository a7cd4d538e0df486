import Foundation
import RoostCore
import RoostHTTP
import RoostServer
import RoostTestSupport
import Testing

/// A server whose administrator, dave (password `dave-password`, made by `roost users create
/// --admin`), is outside `--admin-allow` (10.0.0.0/8; the tests connect from loopback).
func makeServerWithAdminOutsideTheList(
    _ configure: @escaping @Sendable (inout ServerConfiguration) -> Void = { _ in }
) async throws -> TestServer {
    let directory = try await makeDataFolder()
    let admin = try await runRoost(
        ["users", "create", "dave", "--admin", "--data-dir", directory], input: "dave-password\n")
    guard admin.status == 0 else { throw TestClientError(description: admin.errorOutput) }
    return try await TestServer(dataDirectory: directory) { configuration in
        configuration.passwordHasher = PasswordHasher.cheapForTests()
        configuration.adminAllowed = try? TrustedProxies("10.0.0.0/8")
        configuration.loginLimits.registrationsPerAddress = testRegistrationsPerAddress
        configure(&configuration)
    }
}

/// `--admin-allow`: the dashboard and `/ff/admin/…` only from the listed addresses.
@Suite("Admin address allow-list")
struct AdminAddressTests {
    @Test("outside --admin-allow, /_/ and every /ff/admin route are 403 address_not_allowed; the API is not")
    func refusedOutsideTheList() async throws {
        let server = try await makeServerWithAdminOutsideTheList()
        defer { Task { await server.stop() } }
        let token = try await server.client.login("dave", password: "dave-password")
        let guid = try #require(
            (try await server.client.send("GET", "/ff/session", headers: [("X-Token", token)]).json["user"]
                as? [String: Any])?["guid"] as? String)
        for (method, path) in [
            ("GET", "/_/"), ("GET", "/_/assets/app.js"), ("GET", "/ff/admin/collections"),
            ("GET", "/ff/admin/collections/Note/objects"), ("GET", "/ff/admin/sessions?user=\(guid)"),
            ("DELETE", "/ff/admin/sessions/x"), ("GET", "/ff/admin/identities?user=\(guid)"),
            ("DELETE", "/ff/admin/identities/apple?user=\(guid)"),
        ] {
            let refused = try await server.client.send(method, path, headers: [("X-Token", token)])
            #expect(refused.status == 403, "\(method) \(path)")
            #expect(refused.json["code"] as? String == "address_not_allowed", "\(method) \(path)")
            // Before the token is even looked at.
            let forged = try await server.client.send(method, path, headers: [("X-Token", "forged")])
            #expect(forged.json["code"] as? String == "address_not_allowed", "\(method) \(path)")
        }
        #expect(
            try await server.client.send("GET", "/ff/tokens", headers: [("X-Token", token)]).status == 200)
        #expect(try await server.client.send("GET", "/health").status == 200)
    }

    @Test("outside --admin-allow an administrator's token is an ordinary user's on every route")
    func administratorsAreOrdinaryUsersOutsideTheList() async throws {
        let server = try await makeServerWithAdminOutsideTheList { configuration in
            configuration.metricsAllowed = try! TrustedProxies("10.0.0.0/8")
        }
        defer { Task { await server.stop() } }
        let dave = [("X-Token", try await server.client.login("dave", password: "dave-password"))]
        let registered = try await server.client.register("erin")
        let erinGuid = try #require((registered.json["user"] as? [String: Any])?["guid"] as? String)
        let erin = [("X-Token", try await server.client.login("erin"))]
        let note = try await server.client.send(
            "POST", "/ff/resources/Diary", json: #"{"text":"erin's own"}"#, headers: erin)
        #expect(note.status == 201, "\(note.text)")
        let noteGuid = try #require(note.json["guid"] as? String)
        let listed = try await server.client.send(
            "PUT", "/ff/resources/Diary/\(noteGuid)/ffACL", json: #"{"readUsers":[],"writeUsers":[]}"#,
            headers: erin)
        #expect(listed.status == 200, "\(listed.text)")

        // A stolen admin token cannot promote anyone, nor deactivate, nor read what is not shared.
        for field in ["admin", "active"] {
            let value = field == "admin" ? "true" : "false"
            let promoted = try await server.client.send(
                "PATCH", "/ff/resources/FFUser/\(erinGuid)", json: #"{"\#(field)":\#(value)}"#, headers: dave)
            #expect(promoted.status == 403, "\(field): \(promoted.text)")
            #expect(promoted.json["code"] as? String == "forbidden", "\(field): \(promoted.text)")
        }
        let read = try await server.client.send("GET", "/ff/resources/Diary/\(noteGuid)", headers: dave)
        let asStranger = try await server.client.send(
            "GET", "/ff/resources/Diary/\(noteGuid)", headers: [("X-Token", try await strangerToken(server))])
        #expect(read.status == asStranger.status, "\(read.text)")
        #expect(read.status == 404 || read.status == 403, "\(read.text)")
        let metrics = try await server.client.send("GET", "/metrics", headers: dave)
        #expect(metrics.status == 403, "\(metrics.text)")
        let push = try await server.client.send(
            "POST", "/ff/push", json: #"{"users":["\#(erinGuid)"],"alert":"hi"}"#, headers: dave)
        #expect(push.status == 403, "\(push.text)")
        // Erin's account is as it was.
        let session = try await server.client.send("GET", "/ff/session", headers: erin)
        #expect((session.json["user"] as? [String: Any])?["admin"] as? Bool != true, "\(session.text)")
        #expect(session.status == 200)
    }

    private func strangerToken(_ server: TestServer) async throws -> String {
        _ = try await server.client.register("frank")
        return try await server.client.login("frank")
    }

    @Test("inside --admin-allow everything is as without it; a bad list is a usage error")
    func servedInsideTheList() async throws {
        let server = try await TestServer { configuration in
            configuration.adminAllowed = try? TrustedProxies("127.0.0.0/8,::1")
        }
        defer { Task { await server.stop() } }
        #expect(try await server.client.send("GET", "/_/").status == 200)
        let anonymous = try await server.client.send("GET", "/ff/admin/collections")
        #expect(anonymous.json["code"] as? String == "login_required")
        let usage = try await runRoost(["serve", "--admin-allow", "not-an-address"])
        #expect(usage.status == 64)
        #expect(usage.errorOutput.contains("--admin-allow"), "\(usage.errorOutput)")
    }
}

@Suite("Admin address allow-list: ASYNC handlers")
struct AdminAddressAsyncTests {
    static let counter = """
        var ff = require('ffef/FatFractal');
        exports.count = function () {
            var order = ff.getEventHandlerData();
            ff.createObjAtUrl({guid: 'c-' + order.guid, seen: ff.getArrayFromUri('/Secret').length}, '/Count');
        };
        """

    @Test(
        "under --admin-allow an administrator's ASYNC handler runs as an ordinary user (its address is not kept)"
    )
    func asyncHandlersOfAdministratorsRunAsOrdinaryUsers() async throws {
        var definition = try AppDefinition.parse(
            Array(
                #"""
                {"collections": {"Secret": {"rules": {"read": "createdBy eq @user.guid"}},
                                 "Order": {"rules": {"create": "loggedIn"}}, "Count": {"rules": {"create": "loggedIn"}}}}
                """#.utf8))
        definition.scripts.modules = ["scripts/count": Self.counter]
        definition.scripts.handlers = [
            ScriptHandler(
                name: "Count", collection: "Order", events: [.create], phase: .async,
                entry: ScriptEntry(module: "scripts/count", function: "count"))
        ]
        let app = definition
        let server = try await makeServerWithAdminOutsideTheList { configuration in
            configuration.appDefinition = app
        }
        defer { Task { await server.stop() } }
        _ = try await server.client.register("erin")
        let erin = [("X-Token", try await server.client.login("erin"))]
        for _ in 0..<3 {
            #expect(
                try await server.client.send("POST", "/ff/resources/Secret", json: "{}", headers: erin).status
                    == 201)
        }
        let dave = [("X-Token", try await server.client.login("dave", password: "dave-password"))]
        let order = try await server.client.send(
            "POST", "/ff/resources/Order", json: #"{"guid":"o1"}"#, headers: dave)
        #expect(order.status == 201, "\(order.text)")
        var count: TestResponse?
        #expect(
            await eventually(within: 60) {
                count = try? await server.client.send("GET", "/ff/resources/Count/c-o1")
                return count?.status == 200
            })
        // As an administrator it would see erin's three secrets.
        #expect(count?.json["seen"] as? Int == 0, "\(count?.text ?? "")")
    }
}
