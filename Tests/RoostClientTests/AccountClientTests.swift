import Foundation
import RoostClient
import RoostTestSupport
import Synchronization
import Testing

/// Accounts through the SDK against a real server: the token is kept, the password never.
@Suite struct AccountClientTests {
    @Test func registerKeepsTheTokenAndALaterLaunchIsLoggedIn() async throws {
        let server = try await makeServer()
        let storage = TestServer.makeTemporaryDirectory()
        let client = try makeClient(port: server.port, storage: storage)
        let user = try await client.register(
            userName: "alice", password: "correct horse", email: "alice@example.com",
            profile: ["firstName": "Al"])
        #expect(user.userName == "alice")
        #expect(user.firstName == "Al")
        #expect(await client.isLoggedIn)

        let stored = try String(contentsOfFile: storage + "/credential.json", encoding: .utf8)
        #expect(!stored.contains("correct horse"))
        #expect(stored.contains(user.guid))
        let attributes = try FileManager.default.attributesOfItem(atPath: storage + "/credential.json")
        #expect((attributes[.posixPermissions] as? Int) == 0o600)

        // Seed 000's auto-login: a new launch finds the token and the server accepts it.
        let relaunched = try makeClient(port: server.port, storage: storage)
        #expect(await relaunched.currentUser?.guid == user.guid)
        let session = try await relaunched.session()
        #expect(session?.email == "alice@example.com")

        #expect(try await relaunched.logout() == true)
        #expect(await relaunched.currentUser == nil)
        #expect(!FileManager.default.fileExists(atPath: storage + "/credential.json"))
        // The first client's token was the same device's token: revoked too.
        #expect(try await client.session() == nil)
        #expect(await client.isLoggedIn == false)
        #expect(try await client.logout() == false)
    }

    @Test func loginByNameOrEmailAndAGenericFailure() async throws {
        let server = try await makeServer()
        let setup = try makeClient(port: server.port)
        try await setup.register(userName: "bob", password: "correct horse", email: "bob@example.com")
        let client = try makeClient(port: server.port)
        #expect(try await client.login(email: "BOB@example.com", password: "correct horse").userName == "bob")
        try await client.logout()
        #expect(try await client.login(userName: "bob", password: "correct horse").email == "bob@example.com")

        var failures: [RoostError] = []
        for (name, password) in [("bob", "wrong password"), ("nobody", "correct horse")] {
            do {
                try await makeClient(port: server.port).login(userName: name, password: password)
            } catch let error as RoostError {
                failures.append(error)
            }
        }
        #expect(failures.map(\.code) == ["invalid_credentials", "invalid_credentials"])
        #expect(failures.map(\.status) == [401, 401])
        #expect(failures[0].message == failures[1].message, "no user enumeration")

        do {
            try await makeClient(port: server.port).register(userName: "bob", password: "correct horse")
            Issue.record("a taken name registered")
        } catch let error as RoostError {
            #expect(error.status == 409)
        }
    }

    @Test func aRevokedTokenIsForgottenOnItsFirstRefusal() async throws {
        let server = try await makeServer()
        let storage = TestServer.makeTemporaryDirectory()
        let client = try makeClient(port: server.port, storage: storage)
        try await client.register(userName: "carol", password: "correct horse")
        let note = try await client.create(Note(text: "mine"))
        // Revoked as another device of the user's would: through the server, with the token itself.
        let token = try JSONDecoder().decode(
            Credential.self, from: Data(contentsOf: URL(fileURLWithPath: storage + "/credential.json"))
        ).token
        _ = try await server.client.send("POST", "/ff/logout", headers: [("X-Token", token)])
        do {
            _ = try await client.fetch(Note.self, guid: note.guid, cachePolicy: .networkOnly)
            Issue.record("a revoked token was accepted")
        } catch let error as RoostError {
            #expect(error.code == "invalid_token")
        }
        #expect(await client.isLoggedIn == false)
        #expect(!FileManager.default.fileExists(atPath: storage + "/credential.json"))
        // Anonymous again, the object is readable under the open rules.
        #expect(try await client.fetch(Note.self, guid: note.guid).text == "mine")
    }

    @Test func theLoginHandlerLogsInAndTheRequestCarriesOn() async throws {
        let definition =
            #"{"collections":{"Choice":{"rules":{"create":"loggedIn"}},"*":{"rules":{"create":"public"}}}}"#
        let server = try await makeServer(definition: definition)
        try await makeClient(port: server.port).register(userName: "dave", password: "correct horse")
        let client = try makeClient(port: server.port)
        struct Choice: RoostModel { var picked: String }
        do {
            _ = try await client.create(Choice(picked: "a"))
            Issue.record("an anonymous create was accepted")
        } catch let error as RoostError {
            #expect(error.code == "login_required")
        }
        let calls = Counter()
        await client.setLoginHandler { [client] error in
            calls.increment()
            #expect(error.status == 401)
            return (try? await client.login(userName: "dave", password: "correct horse")) != nil
        }
        let choice = try await client.create(Choice(picked: "b"))
        #expect(choice.metadata.createdBy == (await client.currentUser?.guid))
        #expect(calls.value == 1)
        #expect(try await server.count("Choice") == 1)
    }
}

/// A thread-safe count for closures.
final class Counter: Sendable {
    private let count = Mutex(0)
    func increment() { count.withLock { $0 += 1 } }
    var value: Int { count.withLock { $0 } }
}
