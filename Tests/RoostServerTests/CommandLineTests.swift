import Foundation
import RoostTestSupport
import Testing

@Suite("The roost command")
struct CommandLineTests {
    @Test("help and version read like a real tool's")
    func help() async throws {
        let main = try await runRoost(["--help"])
        #expect(main.status == 0)
        #expect(main.output.contains("USAGE:\n  roost <command> [options]"))
        #expect(main.output.contains("users      List users, create administrators"))
        let serve = try await runRoost(["serve", "--help"])
        #expect(serve.status == 0)
        #expect(serve.output.contains("--data-dir PATH"))
        #expect(serve.output.contains("env: ROOST_SESSION_POLICY"))
        // Labels wider than the column are not cut short.
        #expect(serve.output.contains("  --events-slow-reader-timeout DURATION\n"))
        #expect(serve.output.contains("  --max-connections-per-client N\n"))
        #expect(serve.output.contains("  --tls-handshake-timeout SECONDS\n"))
        #expect(try await runRoost(["version"]).output.hasPrefix("roost "))
        #expect(try await runRoost(["users", "--help"]).output.contains("roost users reset-password NAME"))
    }

    @Test(
        "mistakes exit 64 with a message that says what to do",
        arguments: [
            (["serve", "--port", "99999"], "--port takes a whole number from 0 to 65535, not '99999'"),
            (["serve", "--bogus"], "unknown option '--bogus'"),
            (
                ["serve", "--max-body-size", "lots"],
                "--max-body-size takes a size such as 10MiB or 65536, not 'lots'"
            ),
            (
                ["serve", "--session-policy", "some"],
                "--session-policy takes perDevice, singleDevice or unlimited, not 'some'"
            ),
            (
                ["serve", "--token-lifetime", "forever"],
                "--token-lifetime takes a duration such as 30d, 12h or 3600, not 'forever'"
            ),
            (
                ["serve", "--refresh-tokens", "sometimes"],
                "--refresh-tokens takes off, optional or always, not 'sometimes'"
            ),
            (
                ["serve", "--access-token-lifetime", "30s"],
                "--access-token-lifetime takes a duration from 1m to 1d such as 15m, not '30s'"
            ),
            (
                ["serve", "--access-token-lifetime", "2d"],
                "--access-token-lifetime takes a duration from 1m to 1d such as 15m, not '2d'"
            ),
            (
                ["serve", "--smtp-starttls", "maybe"],
                "--smtp-starttls takes 'required', 'optional' or 'off', not 'maybe'"
            ),
            (["serve", "--mail-from", "nobody"], "--mail-from takes an address such as noreply@example.com"),
            (
                ["serve", "--mail-from", "a@example.com"],
                "--smtp-user, --smtp-password-file and --mail-from need --smtp-url"
            ),
            (["serve", "--smtp-url", "smtp://127.0.0.1:25"], "--smtp-url needs --mail-from"),
            (["serve", "--apple-client-ids", ","], "--apple-client-ids takes comma-separated client ids"),
            (
                ["serve", "--google-keys-url", "http://keys.example"],
                "--google-keys-url takes an https:// URL, not 'http://keys.example'"
            ),
            (
                ["serve", "--sign-in-link-verified-emails", "yes"],
                "--sign-in-link-verified-emails takes 'on' or 'off', not 'yes'"
            ),
            (["frobnicate"], "unknown command 'frobnicate'"),
            (["users", "create"], "'roost users create' takes one user name"),
        ])
    func usageErrors(_ arguments: [String], _ message: String) async throws {
        let result = try await runRoost(arguments)
        #expect(result.status == 64)
        #expect(result.errorOutput.contains(message), "\(result.errorOutput)")
        #expect(result.errorOutput.contains("--help"))
    }

    @Test("index create, list and drop")
    func indexes() async throws {
        let directory = try await makeDataFolder()
        let created = try await runRoost([
            "index", "create", "Celebrity", "address.city", "--force", "--data-dir", directory,
        ])
        #expect(created.status == 0, "\(created.errorOutput)")
        #expect(
            try await runRoost(["index", "list", "--data-dir", directory]).output
                == "Celebrity\taddress.city\n")
        let bad = try await runRoost(["index", "create", "Celebrity", "a-b", "--data-dir", directory])
        #expect(bad.status == 64)
        #expect(bad.errorOutput.contains("'a-b' is not a field"))
        #expect(
            try await runRoost(["index", "drop", "Celebrity", "address.city", "--data-dir", directory]).status
                == 0)
        #expect(
            try await runRoost(["index", "drop", "Celebrity", "address.city", "--data-dir", directory]).status
                == 67)
    }

    @Test("users create --admin, reset-password and delete act on a running server's data")
    func userAdministration() async throws {
        let directory = TestServer.makeTemporaryDirectory()
        // Admin commands act on the database a server made, and work beside it.
        let server = try RoostProcess(dataDirectory: directory)
        let created = try await runRoost(
            ["users", "create", "root", "--admin", "--email", "root@example.com", "--data-dir", directory],
            input: "first-password\n")
        #expect(created.status == 0, "\(created.errorOutput)")
        #expect(created.output.hasPrefix("created administrator 'root'"))
        #expect(!created.output.contains("first-password"))
        let again = try await runRoost(
            ["users", "create", "ROOT", "--data-dir", directory], input: "first-password\n")
        #expect(again.status == 65)
        #expect(again.errorOutput.contains("That userName is already registered"))

        let client = TestHTTPClient(port: server.port)
        let token = try await client.login("root", password: "first-password")
        let session = try await client.send("GET", "/ff/session", headers: [("X-Token", token)])
        #expect((session.json["user"] as? [String: Any])?["admin"] as? Bool == true)

        let reset = try await runRoost(
            ["users", "reset-password", "root", "--data-dir", directory], input: "second-password\n")
        #expect(reset.status == 0, "\(reset.errorOutput)")
        #expect(
            try await client.send("GET", "/ff/session", headers: [("X-Token", token)]).text
                == #"{"loggedIn":false}"#)
        #expect(
            try await client.send(
                "POST", "/ff/login", json: #"{"userName":"root","password":"first-password"}"#
            ).status == 401)
        let second = try await client.login("root", password: "second-password")

        let deleted = try await runRoost(["users", "delete", "root", "--data-dir", directory])
        #expect(deleted.status == 0)
        let rejected = try await client.send(
            "POST", "/ff/resources/Note", json: "{}", headers: [("X-Token", second)])
        #expect(rejected.status == 401)
        #expect(rejected.json["code"] as? String == "invalid_token")
        #expect(
            try await client.send(
                "POST", "/ff/login", json: #"{"userName":"root","password":"second-password"}"#
            ).status == 401)
        let missing = try await runRoost(["users", "delete", "root", "--data-dir", directory])
        #expect(missing.status == 67)
        #expect(missing.errorOutput.contains("There is no user 'root'."))
        try await server.stop(signal: SIGTERM)
    }
}
