import Foundation
import RoostClient
import RoostTestSupport
import Testing

/// The seeds' apps in Examples/, run as real processes against a real server.
@Suite struct ExampleAppTests {
    /// One example program with its own state folder.
    struct App {
        let name: String
        let port: Int
        let state = TestServer.makeTemporaryDirectory()
        var extra: [String] = []

        func run(_ arguments: String..., input: String = "") async throws -> CommandResult {
            try await runProgram(
                try RoostProcess.productPath(name),
                ["--server", "http://127.0.0.1:\(port)", "--state", state] + extra + arguments, input: input)
        }

        /// Runs and expects success; returns the output lines.
        func lines(_ arguments: String..., input: String = "") async throws -> [String] {
            let result = try await runProgram(
                try RoostProcess.productPath(name),
                ["--server", "http://127.0.0.1:\(port)", "--state", state] + extra + arguments, input: input)
            #expect(result.status == 0, "\(name) \(arguments): \(result.errorOutput)")
            return result.output.split(separator: "\n").map(String.init)
        }
    }

    @Test func chirpPostsReadsTheFeedAndDeliversOfflinePostsOnce() async throws {
        let server = try await makeServer()
        let port = server.port
        let chirp = App(name: "Chirp", port: port)
        #expect(try await chirp.lines("register", "alice", input: "correct horse\n") == ["registered alice"])
        // A new process finds the stored token: seed 000's auto-login.
        #expect(try await chirp.lines("whoami") == ["logged in as alice"])
        let posted = try await chirp.lines("post", "hello")
        #expect(posted.count == 1 && posted[0].hasPrefix("posted "))
        #expect(try await chirp.lines("feed") == ["@alice: hello"])
        let stored = try String(contentsOfFile: chirp.state + "/credential.json", encoding: .utf8)
        #expect(!stored.contains("correct horse"))

        await server.stop()
        let queued = try await chirp.lines("post", "offline", "--count", "3")
        #expect(queued.count == 3 && queued.allSatisfy { $0.hasPrefix("queued ") })
        #expect(try await chirp.lines("pending") == ["3 pending"])

        let restarted = try await makeServer(port: port, dataDirectory: server.dataDirectory)
        #expect(try await chirp.lines("flush") == ["delivered 3, failed 0, pending 0"])
        #expect(try await chirp.lines("flush") == ["delivered 0, failed 0, pending 0"])
        let feed = try await chirp.lines("feed")
        #expect(
            feed.sorted() == ["@alice: hello", "@alice: offline 1", "@alice: offline 2", "@alice: offline 3"])
        let items = try await restarted.items("Micropost")
        #expect(items.count == 4)
        // Each post references its author, the user who created it.
        for item in items {
            let author = try #require(item["createdBy"] as? String)
            #expect((item["user"] as? [String: Any])?["ffUrl"] as? String == "/ff/resources/FFUser/\(author)")
        }

        #expect(try await chirp.lines("logout") == ["logged out"])
        #expect(try await chirp.lines("whoami") == ["not logged in"])
        let refused = try await chirp.run("post", "anonymous")
        #expect(refused.status == 64)
        #expect(refused.errorOutput.contains("log in first"))
    }

    /// `Chirp feed --follow` prints posts as they are made, pushed by the server's realtime feed.
    @Test func chirpFollowsTheFeedLive() async throws {
        let server = try await makeServer()
        let chirp = App(name: "Chirp", port: server.port)
        _ = try await chirp.lines("register", "carol", input: "correct horse\n")
        _ = try await chirp.lines("post", "before")
        let output = try ChildProcess.makePipe()
        let follower = try ChildProcess(
            try RoostProcess.productPath("Chirp"),
            ["--server", "http://127.0.0.1:\(server.port)", "--state", chirp.state, "feed", "--follow", "2"],
            output: output.write)
        close(output.write)
        let subscribed = try await eventually(within: 30) {
            let metrics = try await server.client.send("GET", "/metrics").text
            return metrics.contains("roost_event_streams 1") || !follower.isRunning
        }
        #expect(subscribed)
        _ = try await chirp.lines("post", "live", "--count", "2")
        #expect(try await follower.exit() == 0)
        let printed = String(decoding: readAll(output.read), as: UTF8.self).split(separator: "\n").map(
            String.init)
        #expect(printed == ["@carol: before", "@carol: live 1", "@carol: live 2"])
    }

    /// Kills the client in the middle of delivering its queue, then lets a new process finish:
    /// every post lands exactly once.
    @Test func chirpKilledMidFlushLosesAndRepeatsNothing() async throws {
        let server = try await makeServer()
        let port = server.port
        let chirp = App(name: "Chirp", port: port)
        _ = try await chirp.lines("register", "bob", input: "correct horse\n")
        await server.stop()
        // Enough posts that the flusher is still busy when a starved test process gets to kill it.
        let total = 600
        let queued = try await chirp.lines("post", "bulk", "--count", String(total))
        #expect(queued.count == total)
        let restarted = try await makeServer(port: port, dataDirectory: server.dataDirectory)

        let flusher = try ChildProcess(
            try RoostProcess.productPath("Chirp"),
            ["--server", "http://127.0.0.1:\(port)", "--state", chirp.state, "flush"])
        let started = try await eventually {
            try await restarted.count("Micropost") >= 3 || !flusher.isRunning
        }
        #expect(started)
        flusher.signal(SIGKILL)
        _ = try await flusher.exit()
        let landedBeforeKill = try await restarted.count("Micropost")
        #expect(landedBeforeKill < total, "the kill came before the queue was empty")

        #expect(try await chirp.lines("flush").first?.hasSuffix("failed 0, pending 0") == true)
        let texts = try await restarted.items("Micropost").compactMap { $0["text"] as? String }
        #expect(texts.count == total)
        #expect(Set(texts) == Set((1...total).map { "bulk \($0)" }))
    }

    @Test func wouldYaPicksTwoDifferentCelebritiesAndRecordsAChoiceAfterLogin() async throws {
        let definition =
            #"{"collections":{"Choice":{"rules":{"create":"loggedIn"}},"*":{"rules":{"create":"public","update":"public","delete":"public"}}}}"#
        let server = try await makeServer(definition: definition)
        let game = App(name: "WouldYa", port: server.port)
        #expect(try await game.lines("seed") == ["seeded 6 celebrities"])
        #expect(try await game.lines("seed") == ["seeded 0 celebrities"])
        #expect(try await server.count("Celebrity") == 6)
        let photo = TestServer.makeTemporaryDirectory() + "/ada.png"
        #expect(
            try await game.lines("photo", "celebrity-1", photo) == ["saved 20 bytes of Ada Lovelace's photo"])
        #expect(
            try Data(contentsOf: URL(fileURLWithPath: photo)).prefix(4) == Data([0x89, 0x50, 0x4E, 0x47]))
        var pairs: Set<String> = []
        for _ in 0..<12 {
            let pair = try await game.lines("pair", "female")
            #expect(pair.count == 2)
            let guids = pair.map { $0.split(separator: " ")[1] }
            #expect(guids[0] != guids[1])
            #expect(guids.allSatisfy { ["celebrity-1", "celebrity-2", "celebrity-3"].contains(String($0)) })
            pairs.insert(guids.joined(separator: ","))
        }
        #expect(pairs.count > 1, "the picks vary")
        #expect(
            try await game.lines("pair", "other") == [
                "not enough celebrities of gender 'other'; run seed first"
            ])

        _ = try await App(name: "WouldYa", port: server.port).lines(
            "register", "carol", input: "correct horse\n")
        let anonymous = try await game.run("choose", "celebrity-1", "celebrity-2")
        #expect(anonymous.status == 1)
        #expect(anonymous.errorOutput.contains("(login_required)"))
        let recorded = try await game.lines(
            "choose", "celebrity-1", "celebrity-2", "--user", "carol", input: "correct horse\n")
        #expect(recorded.count == 1 && recorded[0].hasPrefix("recorded "))
        let choices = try await server.items("Choice")
        #expect(choices.count == 1)
        #expect(
            (choices.first?["winner"] as? [String: Any])?["ffUrl"] as? String
                == "/ff/resources/Celebrity/celebrity-1")

        // Another player's choice shows live on a screen that watches.
        let output = try ChildProcess.makePipe()
        let watcher = try ChildProcess(
            try RoostProcess.productPath("WouldYa"),
            ["--server", "http://127.0.0.1:\(server.port)", "--state", game.state, "watch", "1"],
            output: output.write)
        close(output.write)
        let subscribed = try await eventually(within: 30) {
            let metrics = try await server.client.send("GET", "/metrics").text
            return metrics.contains("roost_event_streams 1") || !watcher.isRunning
        }
        #expect(subscribed)
        _ = try await game.lines(
            "choose", "celebrity-2", "celebrity-1", "--user", "carol", input: "correct horse\n")
        #expect(try await watcher.exit() == 0)
        let shown = String(decoding: readAll(output.read), as: UTF8.self)
        #expect(shown == "Grace Hopper over Ada Lovelace\n")
    }

    @Test func acronymsListForAnyoneAndAddAfterABasicLogin() async throws {
        let definition =
            #"{"collections":{"Acronym":{"rules":{"read":"public","create":"loggedIn","update":"createdBy eq @user.guid","delete":"createdBy eq @user.guid"}}}}"#
        let server = try await makeServer(definition: definition)
        let app = App(name: "Acronyms", port: server.port)
        #expect(try await app.lines("list") == [])
        let refused = try await app.run("add", "OMG", "Oh My God")
        #expect(refused.status == 1)
        #expect(refused.errorOutput.contains("(login_required)"))
        _ = try await App(name: "Acronyms", port: server.port).lines(
            "register", "dan", input: "correct horse\n")
        let wrong = try await app.run("login", "dan", input: "wrong\n")
        #expect(wrong.status == 1)
        #expect(wrong.errorOutput.contains("(invalid_credentials)"))
        #expect(try await app.lines("login", "dan", input: "correct horse\n") == ["logged in as dan"])
        #expect(try await app.lines("add", "OMG", "Oh My God").first?.hasPrefix("added OMG as ") == true)
        _ = try await app.lines("add", "BRB", "Be Right Back")
        // Anyone lists, through a client that never logged in.
        #expect(
            try await App(name: "Acronyms", port: server.port).lines("list") == [
                "BRB: Be Right Back", "OMG: Oh My God",
            ])
    }

    @Test func tokensIssueCheckAndTheSingleDevicePolicy() async throws {
        let definition = #"{"settings":{"sessionPolicy":"singleDevice"}}"#
        let server = try await makeServer(definition: definition)
        _ = try await server.client.send(
            "POST", "/ff/register",
            json: #"{"userName":"eve","email":"eve@example.com","password":"correct horse"}"#)
        let phone = App(name: "Tokens", port: server.port, extra: ["--device", "phone"])
        let tablet = App(name: "Tokens", port: server.port, extra: ["--device", "tablet"])
        let issued = try await phone.lines(
            "issue", "eve@example.com", "--manufacturer", "ACME-1", input: "correct horse\n")
        #expect(issued.count == 1 && issued[0].hasPrefix("token ") && issued[0].contains("for device phone"))
        let phoneToken = String(issued[0].split(separator: " ")[1])
        #expect(try await phone.lines("check", phoneToken).first?.hasPrefix("valid until 20") == true)
        #expect(try await phone.lines("list") == ["\(phoneToken) phone (this device)"])

        let wrong = try await tablet.run("issue", "eve@example.com", input: "nope\n")
        #expect(wrong.status == 1)
        #expect(wrong.errorOutput.contains("(invalid_credentials)"))
        let second = try await tablet.lines("issue", "eve", input: "correct horse\n")
        let tabletToken = String(second[0].split(separator: " ")[1])
        // Single device: the phone's token is gone.
        #expect(
            try await phone.lines("check", phoneToken) == ["this device's token was revoked; issue a new one"]
        )
        #expect(try await tablet.lines("check", phoneToken) == ["expired or revoked"])
        #expect(try await tablet.lines("revoke", tabletToken) == ["revoked \(tabletToken)"])
        #expect(
            try await tablet.lines("check", tabletToken) == [
                "this device's token was revoked; issue a new one"
            ])
    }

    @Test func sessionCheckAnswersAmILoggedIn() async throws {
        let server = try await makeServer()
        _ = try await server.client.send(
            "POST", "/ff/register",
            json: #"{"userName":"finn","firstName":"Finn","password":"correct horse"}"#)
        let app = App(name: "SessionCheck", port: server.port)
        #expect(try await app.lines("status") == ["logged_in: 0"])
        #expect(try await app.lines("logout") == ["logged_out: 0"])
        let wrong = try await app.run("login", "finn", input: "wrong\n")
        #expect(wrong.status == 1)
        #expect(try await app.lines("login", "finn", input: "correct horse\n") == ["welcome, Finn"])
        #expect(try await app.lines("status") == ["logged_in: 1 (finn)"])
        #expect(try await app.lines("logout") == ["logged_out: 1"])
        #expect(try await app.lines("status") == ["logged_in: 0"])
        let usage = try await app.run("--help")
        #expect(usage.status == 0)
        #expect(usage.output.hasPrefix("usage: SessionCheck"))
    }
}
