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
    static func routes(_ world: ScriptAPIWorld, _ played: PlayedScripts, runsPerCaller: Int = 4)
        -> ScriptExtensionRoutes
    {
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
            definitions: world.definitions, logger: world.logger, runsPerCaller: runsPerCaller)
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

    @Test(
        "one caller has at most N extension calls in progress: more are 429 too_many_script_runs; others are not held up"
    )
    func runsPerCaller() async throws {
        try await ScriptAPIWorld.with { world in
            let gate = ScriptGate()
            let held = PlayedScripts { _, _ in
                await gate.wait()
                return ScriptOutcome(value: .string("done"))
            }
            let routes = Self.routes(world, held, runsPerCaller: 2)
            let alice = try await world.user("alice")
            let bob = try await world.user("bob")
            func from(_ address: String) -> Request {
                var request = Self.request("Open")
                request.remoteAddress = address
                return request
            }
            // Anonymous callers count by address, and an IPv6 address by its /64.
            let office = "2001:db8:0:1::7"
            async let first = routes.run(Self.request("Stats"), alice)
            async let second = routes.run(Self.request("Stats"), alice)
            async let anonymous = routes.run(from(office), nil)
            async let anonymousToo = routes.run(from(office), nil)
            await gate.waitForWaiters(4)
            let refused = await scriptError { _ = try await routes.run(Self.request("Stats"), alice) }
            #expect(refused == RoostError.tooManyScriptRuns(2))
            #expect(refused?.status == 429 && refused?.code == "too_many_script_runs")
            #expect(refused?.details["limit"] == .integer(2))
            #expect(
                await scriptError { _ = try await routes.run(from(office), nil) }
                    == RoostError.tooManyScriptRuns(2))
            // Another user, and the same anonymous caller from another address, are not held up.
            async let other = routes.run(Self.request("Stats"), bob)
            async let otherAddress = routes.run(from("2001:db8:0:2::7"), nil)
            await gate.waitForWaiters(6)
            await gate.open()
            for response in try await [first, second, anonymous, anonymousToo, other, otherAddress] {
                #expect(response.status == 200)
            }
            // Finished calls give their places back.
            #expect(try await routes.run(Self.request("Stats"), alice).status == 200)
            #expect(held.seen.count == 7)
        }
    }
}

/// Holds scripts until opened.
actor ScriptGate {
    private var waiters: [CheckedContinuation<Void, Never>] = []
    private var opened = false
    private var arrived = 0
    private var watchers: [(Int, CheckedContinuation<Void, Never>)] = []

    func wait() async {
        if opened { return }
        arrived += 1
        for (count, watcher) in watchers where arrived >= count { watcher.resume() }
        watchers.removeAll { arrived >= $0.0 }
        await withCheckedContinuation { waiters.append($0) }
    }

    /// Returns once `count` scripts wait in all.
    func waitForWaiters(_ count: Int) async {
        if arrived >= count { return }
        await withCheckedContinuation { watchers.append((count, $0)) }
    }

    func open() {
        opened = true
        for waiter in waiters { waiter.resume() }
        waiters = []
    }
}
