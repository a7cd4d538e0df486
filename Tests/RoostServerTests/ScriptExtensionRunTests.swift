import Foundation
import RoostCore
import RoostHTTP
import RoostJSON
import RoostScripts
import Synchronization
import Testing

@testable import RoostServer

/// Stands in for the script runtime: records each invocation and plays a script written in Swift
/// against the real `ff` API it is given.
final class PlayedScripts: Sendable {
    typealias Script = @Sendable (ScriptInvocation, any ScriptCallHandling) async throws -> ScriptOutcome
    private let invocations = Mutex<[(ScriptInvocation, any ScriptCallHandling)]>([])
    let script: Script

    init(_ script: @escaping Script) { self.script = script }

    var seen: [ScriptInvocation] { invocations.withLock { $0.map(\.0) } }

    /// What `ff.getActiveUser()` answered the last script.
    func lastActiveUser() async throws -> JSONValue {
        let calls = try #require(invocations.withLock { $0.last?.1 })
        return try await calls.call("getActiveUser", arguments: [])
    }

    func invoke(_ invocation: ScriptInvocation, _ calls: any ScriptCallHandling) async throws -> ScriptOutcome
    {
        invocations.withLock { $0.append((invocation, calls)) }
        return try await script(invocation, calls)
    }
}

@Suite("The extension route's work around the script")
struct ScriptExtensionRunTests {
    static func routes(_ world: ScriptAPIWorld, _ played: PlayedScripts) -> ScriptExtensionRoutes {
        var definition = world.definitions.definition
        let entry = ScriptEntry(module: "scripts/Club", function: "run")
        definition.scripts.extensions = [
            "Stats": ScriptExtension(name: "Stats", secured: true, entry: entry),
            "Open": ScriptExtension(name: "Open", secured: false, entry: entry),
            "Audit": ScriptExtension(name: "Audit", secured: false, entry: entry, rights: .system),
        ]
        definition.hosting.appPrefix = "club"
        world.definitions.replace(with: definition)
        return ScriptExtensionRoutes(
            invoke: { try await played.invoke($0, $1) }, objects: world.objects, accounts: world.accounts,
            definitions: world.definitions, logger: world.logger)
    }

    static func request(_ name: String, method: HTTPMethod = .get, body: [UInt8] = []) -> Request {
        var request = Request(
            method: method, target: "/ff/ext/\(name)?x=1", headers: HTTPHeaders([("Host", "example.test")]),
            body: body)
        request.parameters = ["name": name]
        request.requestID = "req-ext"
        return request
    }

    /// hoodyoodoo's AggregateStats in Swift: counts through the `ff` API and answers
    /// `r.result = JSON.stringify(stats)`.
    static let stats = PlayedScripts { invocation, calls in
        let notes = try await calls.call("getAllGuids", arguments: [.string("/Diary")])
        let stats = JSONValue.object(
            JSONObject(uniqueMembers: [
                ("clazz", .string("Stats")), ("notes", .integer(Int64(notes.array.count))),
            ]))
        return ScriptOutcome(
            response: JSONObject(uniqueMembers: [
                ("result", .string(JSONWriter.string(stats))), ("responseCode", .string("200")),
                ("statusMessage", .string("Counted")), ("mimeType", .string("application/json")),
            ]))
    }

    @Test("an unknown extension is 404 and an anonymous caller of a secured one 401, before any script runs")
    func refusedBeforeScripts() async throws {
        try await ScriptAPIWorld.with { world in
            let played = PlayedScripts { try await Self.stats.script($0, $1) }
            let routes = Self.routes(world, played)
            let unknown = await scriptError { _ = try await routes.run(Self.request("Nope"), nil) }
            #expect(
                unknown
                    == RoostError(
                        status: 404, code: "not_found", message: "This app has no extension 'Nope'.",
                        details: JSONObject(uniqueMembers: [("extension", .string("Nope"))])))
            let anonymous = await scriptError { _ = try await routes.run(Self.request("Stats"), nil) }
            #expect(anonymous == RoostError.loginRequired)
            let alice = try await world.user("alice")
            let big = [UInt8](repeating: 32, count: ScriptExtensionRoutes.maxContentBytes + 1)
            let tooBig = await scriptError {
                _ = try await routes.run(Self.request("Stats", method: .post, body: big), alice)
            }
            #expect(tooBig?.status == 413)
            #expect(tooBig?.code == "body_too_large")
            #expect(played.seen.isEmpty)
        }
    }

    @Test(
        "a logged-in caller's invocation: the request data, the context, and the answer in FatFractal's envelope"
    )
    func invocation() async throws {
        try await ScriptAPIWorld.with { world in
            let played = PlayedScripts { try await Self.stats.script($0, $1) }
            let routes = Self.routes(world, played)
            let alice = try await world.user("alice")
            _ = try await world.create("Diary", #"{"n":1}"#, as: alice)
            let response = try await routes.run(Self.request("Stats"), alice)
            #expect(response.status == 200)
            #expect(
                String(decoding: response.body, as: UTF8.self)
                    == #"{"statusMessage":"Counted","result":{"clazz":"Stats","notes":1}}"#)
            let invocation = try #require(played.seen.first)
            #expect(invocation.kind == .extension)
            #expect(invocation.name == "Stats")
            #expect(invocation.entry == ScriptEntry(module: "scripts/Club", function: "run"))
            #expect(invocation.data["httpMethod"] == .string("GET"))
            #expect(invocation.data["httpParameters"] == (try json(#"{"x":"1"}"#)))
            // The worker writes FF_EXTENSION_REQUEST_DATA_JSON from the data: the object crosses once.
            #expect(invocation.argument == nil)
            // Looked up when the script asks, not for every run.
            #expect(invocation.context["activeUser"] == nil)
            let user = try await played.lastActiveUser()
            #expect(user["guid"] == .string(alice.userGuid))
            #expect(user["clazz"] == .string("FFUser"))
            #expect(user["userName"] == .string("alice"))
            #expect(invocation.context["appAddress"] == .string("http://example.test/club"))
            #expect(invocation.context["requestId"] == .string("req-ext"))
        }
    }

    @Test("an anonymous caller's script reads only what anonymous may; a system extension reads everything")
    func rights() async throws {
        try await ScriptAPIWorld.with { world in
            let played = PlayedScripts { invocation, calls in
                ScriptOutcome(value: try await calls.call("getArrayFromUrl", arguments: [.string("/Diary")]))
            }
            let routes = Self.routes(world, played)
            let alice = try await world.user("alice")
            _ = try await world.create("Diary", #"{"secret":"yes"}"#, as: alice)
            let open = try await routes.run(Self.request("Open"), nil)
            #expect(String(decoding: open.body, as: UTF8.self) == #"{"statusMessage":"OK","result":[]}"#)
            #expect(try await played.lastActiveUser()["guid"] == .string("anonymous"))
            let audit = try await routes.run(Self.request("Audit"), nil)
            #expect(String(decoding: audit.body, as: UTF8.self).contains(#""secret":"yes""#))
            // The system's rights, but the caller is still who getActiveUser names.
            #expect(try await played.lastActiveUser()["guid"] == .string("anonymous"))
        }
    }

    @Test(
        "an answer that cannot be HTTP is logged and answered 500 script_failed; a script's refusal passes through"
    )
    func badAnswers() async throws {
        try await ScriptAPIWorld.with { world in
            let bad = PlayedScripts { _, _ in
                ScriptOutcome(response: JSONObject(uniqueMembers: [("responseCode", .string("teapot"))]))
            }
            let failed = await scriptError {
                _ = try await Self.routes(world, bad).run(Self.request("Open"), nil)
            }
            #expect(failed == RoostError.scriptFailed("Open"))
            #expect(world.log.text.contains("responseCode \"teapot\" is not an HTTP status"))
            #expect(world.log.text.contains("req-ext"))
            let refusing = PlayedScripts { _, _ in
                throw RoostError.scriptRefused(status: 403, message: "Members only")
            }
            let refused = await scriptError {
                _ = try await Self.routes(world, refusing).run(Self.request("Open"), nil)
            }
            #expect(refused == RoostError.scriptRefused(status: 403, message: "Members only"))
        }
    }
}
