import Foundation
import RoostTestSupport
import Testing

/// Issue 24, item 14: `roost restore` (the real binary) must not bring back a revoked token.
@Suite("Restore ends sessions", .enabled(if: TestBackend.isSQLite))
struct RestoreSessionTests {
    /// A server with alice logged in twice, backed up; then one token is revoked (logout) and a
    /// write made, and the server stopped. Returns the data folder, the backup and both tokens.
    private func backedUp() async throws -> (directory: String, backup: String, revoked: String, kept: String)
    {
        let directory = TestServer.makeTemporaryDirectory()
        let server = try RoostProcess(
            dataDirectory: directory, arguments: ["--app", try writeOpenDefinition(beside: directory)])
        let client = TestHTTPClient(port: server.port)
        let registered = try await client.register("alice")
        let revoked = try #require(registered.json["token"] as? String)
        let kept = try await client.login("alice", device: "phone")
        let backup = directory + "-backup"
        let made = try await runRoost(["backup", backup, "--data-dir", directory])
        #expect(made.status == 0, "\(made.errorOutput)")
        // Revoked after the backup: stolen, say, and logged out by its owner.
        let logout = try await client.send("POST", "/ff/logout", headers: [("X-Token", revoked)])
        #expect(logout.status == 200 || logout.status == 204, "\(logout.text)")
        #expect(try await server.stop(signal: SIGTERM) == 0)
        return (directory, backup, revoked, kept)
    }

    private func session(_ client: TestHTTPClient, _ token: String) async throws -> TestResponse {
        try await client.send("GET", "/ff/tokens", headers: [("X-Token", token)])
    }

    @Test("by default every session of the restored database ends; the password still logs in")
    func restoreEndsEverySession() async throws {
        let (directory, backup, revoked, kept) = try await backedUp()
        let restore = try await runRoost(["restore", backup, "--data-dir", directory])
        #expect(restore.status == 0, "\(restore.errorOutput)")
        #expect(
            restore.output.contains(
                "ended the backup's 2 session(s): users log in again (--keep-sessions keeps them)\n"))
        let server = try RoostProcess(
            dataDirectory: directory, arguments: ["--app", try writeOpenDefinition(beside: directory)])
        let client = TestHTTPClient(port: server.port)
        for token in [revoked, kept] {
            let answer = try await session(client, token)
            #expect(answer.status == 401)
            #expect(answer.json["code"] as? String == "invalid_token")
        }
        let fresh = try await client.login("alice")
        #expect(try await session(client, fresh).status == 200)
        #expect(try await server.stop(signal: SIGTERM) == 0)
    }

    @Test("--keep-sessions keeps them, revoked ones included, and says so")
    func keepSessions() async throws {
        let (directory, backup, revoked, kept) = try await backedUp()
        let restore = try await runRoost(["restore", backup, "--keep-sessions", "--data-dir", directory])
        #expect(restore.status == 0, "\(restore.errorOutput)")
        #expect(restore.output.contains("kept the backup's sessions (--keep-sessions)"))
        let server = try RoostProcess(
            dataDirectory: directory, arguments: ["--app", try writeOpenDefinition(beside: directory)])
        let client = TestHTTPClient(port: server.port)
        #expect(try await session(client, kept).status == 200)
        #expect(try await session(client, revoked).status == 200)
        #expect(try await server.stop(signal: SIGTERM) == 0)
    }

    @Test("roost restore --help documents --keep-sessions")
    func help() async throws {
        let help = try await runRoost(["restore", "--help"])
        #expect(help.status == 0)
        #expect(help.output.contains("roost restore SRC [--data-dir PATH] [--keep-sessions]"))
        #expect(help.output.contains("Every session in the restored database ends"))
    }
}
