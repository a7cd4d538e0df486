import Foundation
import RoostCore
import RoostQuery
import RoostTestSupport
import Synchronization
import Testing

/// Counts what requests sent during a reload got back.
final class LoadProbe: Sendable {
    let stop = Atomic<Bool>(false)
    private let results = Mutex<(successes: Int, failures: [Int])>((0, []))
    func record(_ status: Int) {
        results.withLock { if status == 200 { $0.successes += 1 } else { $0.failures.append(status) } }
    }
    var failures: [Int] { results.withLock { $0.failures } }
    var successes: Int { results.withLock { $0.successes } }
    var answered: Int { results.withLock { $0.successes + $0.failures.count } }
}

@Suite("The app definition file")
struct AppDefinitionTests {
    static let invalid: [(String, String)] = [
        (
            "{\n  \"collections\": {\n    \"Post\": {\"rules\": {\"read\": \"public\",}}\n  }\n}",
            "line 3, column"
        ),
        (
            #"{"collections":{"Post":{"rules":{"update":"createdBy eq"}}}}"#,
            "collections.Post.rules.update: expected a value after 'eq' at column 13"
        ),
        (
            #"{"collections":{"Post":{"rules":{"raed":"public"}}}}"#,
            "collections.Post.rules.raed: unknown key"
        ),
        (
            #"{"collections":{"Post":{"rules":{"read":"owner eq @user.name"}}}}"#,
            "collections.Post.rules.read: unknown variable '@user.name'"
        ),
        (
            #"{"collections":{"Post":{"rules":{"read":"guid eq random(guid)"}}}}"#,
            "collections.Post.rules.read"
        ),
        (#"{"collections":{"Bad-Name":{}}}"#, "collections.Bad-Name: a collection name"),
        (#"{"collections":{"Post":{"ownerOnlyFields":["createdBy"]}}}"#, "'createdBy' is metadata"),
        (#"{"collections":{"Post":{"indexes":["a..b"]}}}"#, "collections.Post.indexes"),
        (#"{"settings":{"sessionPolicy":"forever"}}"#, "settings.sessionPolicy: one of"),
        (#"{"settings":{"tokenLifetime":5}}"#, "settings.tokenLifetime"),
        (#"{"settings":{"registration":true}}"#, "settings.registration"),
        (#"{"settings":{"signIn":{"facebook":{}}}}"#, "settings.signIn.facebook: unknown key"),
        (
            #"{"settings":{"signIn":{"apple":{"clientIds":"org.example"}}}}"#,
            "settings.signIn.apple.clientIds"
        ),
        (#"{"settings":{"signIn":{"google":{"clientIds":[""]}}}}"#, "settings.signIn.google.clientIds"),
        (#"{"settings":{"signIn":{"linkVerifiedEmails":"yes"}}}"#, "settings.signIn.linkVerifiedEmails"),
        (#"{"setting":{}}"#, "setting: unknown key"),
        ("[]", "(top level)"),
    ]

    @Test("an invalid definition names the line or field at fault", arguments: invalid)
    func invalidDefinitions(_ text: String, _ expected: String) throws {
        #expect(throws: AppDefinitionError.self) { try AppDefinition.parse(Array(text.utf8)) }
        do {
            _ = try AppDefinition.parse(Array(text.utf8))
        } catch {
            #expect(error.description.contains(expected), "\(error.description)")
        }
    }

    @Test("rules parse principals and variables; queries refuse them")
    func ruleGrammar() throws {
        #expect(
            try QueryParser.parseRule("loggedIn and createdBy eq @user.guid")
                == .and([.loggedIn, .comparison(.field(FieldPath("createdBy")!), .eq, .variable(.userGuid))]))
        #expect(
            try QueryParser.parseRule("@request.body.owner eq @user.guid")
                == .comparison(.variable(.requestBody(FieldPath("owner")!)), .eq, .variable(.userGuid)))
        #expect(
            try QueryParser.parseRule("members contains_any @user.groups")
                == .contains(.field(FieldPath("members")!), .any, .variable(.userGroups)))
        // A field may be called 'public' when an operator follows it.
        #expect(
            try QueryParser.parseRule("public eq true")
                == .comparison(.field(FieldPath("public")!), .eq, .literal(.bool(true))))
        #expect(throws: QueryError.self) { try QueryParser.parse("createdBy eq @user.guid") }
        #expect(throws: QueryError.self) { try QueryParser.parse("public") }
    }

    @Test("reloading valid and invalid definitions under load fails no request")
    func reloadUnderLoad() async throws {
        let world = try await PermissionWorld.make()
        #expect(
            try await world.send(.owner, "POST", "/ff/resources/Acronym", json: #"{"guid":"a1"}"#).status
                == 201)
        let probe = LoadProbe()
        let load = Task {
            await withTaskGroup(of: Void.self) { group in
                for _ in 0..<4 {
                    group.addTask {
                        while !probe.stop.load(ordering: .relaxed) {
                            let response = try? await world.send(.other, "GET", "/ff/resources/Acronym/a1")
                            probe.record(response?.status ?? 0)
                        }
                    }
                }
            }
        }
        let variants = [
            permissionDefinition,
            permissionDefinition.replacingOccurrences(
                of: #""create": "loggedIn"}"#, with: #""create": "none"}"#),
        ]
        for round in 0..<10 {
            try await world.apply(variants[round % 2])
            await #expect(throws: AppDefinitionError.self) { try await world.apply(#"{"collections": ["#) }
            // Each definition serves some requests before the next replaces it.
            let answered = probe.answered
            #expect(await eventually { probe.answered >= answered + 4 })
        }
        probe.stop.store(true, ordering: .relaxed)
        await load.value
        #expect(probe.failures.isEmpty)
        #expect(probe.successes > 0)
        // The last good definition (round 9: creates refused) stays in force after a bad one.
        let create = try await world.send(.owner, "POST", "/ff/resources/Acronym", json: "{}")
        #expect(create.status == 403)
        await world.server.stop()
    }

    @Test("roost app check and apply, and SIGHUP, reload a running server's definition")
    func commandLine() async throws {
        let directory = TestServer.makeTemporaryDirectory()
        let path = directory + "-app.json"
        try Data(#"{"collections":{"*":{"rules":{"create":"public"}}}}"#.utf8).write(
            to: URL(fileURLWithPath: path))
        let server = try RoostProcess(dataDirectory: directory, arguments: ["--app", path])
        let client = TestHTTPClient(port: server.port)
        #expect(try await client.send("POST", "/ff/resources/Note", json: "{}").status == 201)

        let closed = directory + "-closed.json"
        try Data(#"{"collections":{"*":{"rules":{"create":"loggedIn"}}}}"#.utf8).write(
            to: URL(fileURLWithPath: closed))
        let check = try await runRoost(["app", "check", closed])
        #expect(check.status == 0)
        #expect(check.output == "\(closed) is valid: 1 collection declared\n")
        let applied = try await runRoost(["app", "apply", closed, "--data-dir", directory])
        #expect(applied.status == 0, "\(applied.errorOutput)")
        #expect(
            applied.output
                == "roost: installed \(closed) as \(path) (the definition it replaced is kept as \(path).previous)\nroost: the server (pid \(server.process.pid)) now runs \(path)\n"
        )
        #expect(
            try String(contentsOfFile: path + ".previous", encoding: .utf8)
                == #"{"collections":{"*":{"rules":{"create":"public"}}}}"#)
        #expect(try await client.send("POST", "/ff/resources/Note", json: "{}").status == 401)

        let broken = directory + "-broken.json"
        try Data("{\n\"collections\": {\"*\": {\"rules\": {\"create\": \"public eq\"}}}\n}".utf8)
            .write(to: URL(fileURLWithPath: broken))
        let refused = try await runRoost(["app", "apply", broken, "--data-dir", directory])
        #expect(refused.status == 65)
        #expect(
            refused.errorOutput.contains(
                "collections.*.rules.create: expected a value after 'eq' at column 10"))
        #expect(try await client.send("POST", "/ff/resources/Note", json: "{}").status == 401)

        // A bad file behind the server's back: SIGHUP keeps the running definition.
        try Data("{".utf8).write(to: URL(fileURLWithPath: path))
        server.process.signal(SIGHUP)
        // The server writes the outcome of each reload to its status file: wait for this one's.
        let statusPath = directory + "/roost.reload-status"
        #expect(
            await eventually(within: 30) {
                (try? String(contentsOfFile: statusPath, encoding: .utf8))?.hasPrefix(
                    "error: line 1, column 2")
                    == true
            })
        #expect(try await client.send("POST", "/ff/resources/Note", json: "{}").status == 401)
        #expect(try await client.send("GET", "/health").status == 200)

        let invalidStart = try await runRoost([
            "serve", "--port", "0", "--data-dir", directory + "x", "--app", broken,
        ])
        #expect(invalidStart.status == 65)
        #expect(invalidStart.errorOutput.contains("collections.*.rules.create"))
        try await server.stop(signal: SIGTERM)
        #expect(!FileManager.default.fileExists(atPath: directory + "/roost.pid"))
    }
}
