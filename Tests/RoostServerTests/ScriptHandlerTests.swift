import Foundation
import RoostCore
import RoostJSON
import RoostTestSupport
import Testing

/// Issue 19: PRE and POST handlers in the write path, through HTTP on a real server whose scripts
/// run in real worker processes.
@Suite("Script handlers: PRE refuses or changes a write, POST runs after it") struct ScriptHandlerTests {
    static let hooks = """
        var ff = require('ffef/FatFractal');
        exports.refuseSundays = function () {
            var post = ff.getEventHandlerData();
            if (post.day === 'Sunday') throw {statusCode: 403, statusMessage: 'No posts on Sunday.'};
        };
        exports.shout = function (json) {
            var post = ff.getEventHandlerData();
            post.title = JSON.parse(json).title.toUpperCase();
            post.checkedBy = 'shout';
        };
        exports.breaks = function () { return null.field; };
        exports.mourn = function () {
            var gone = ff.getEventHandlerData();
            var me = ff.getActiveUser();
            ff.createObjAtUri({guid: 't-' + gone.guid, left: ff.getArrayFromUri('/Diary').length,
                               by: me ? me.userName : null}, '/Tombstone');
        };
        exports.logs = function () {
            var post = ff.getEventHandlerData();
            print('handler saw ' + post.title);
            ff.logger.info('handler saw ' + post.title + ' too');
        };
        exports.recordChange = function () {
            var change = ff.getUpdateEventHandlerData();
            ff.createObjAtUri({before: change.old.title, after: change['new'].title,
                               version: change.old.version}, '/Change');
        };
        exports.notAnUpdate = function () {
            try { ff.getUpdateEventHandlerData(); } catch (e) { ff.createObjAtUri({error: e.code}, '/Change'); }
        };
        """

    func server(_ handlers: [ScriptHandler]) async throws -> TestServer {
        var definition = openRules
        definition.scripts.modules = ["scripts/hooks": Self.hooks]
        definition.scripts.handlers = handlers
        return try await TestServer { $0.appDefinition = definition }
    }

    func handler(
        _ name: String, _ phase: ScriptHandler.Phase, _ function: String,
        on event: ScriptHandler.Event = .create
    )
        -> ScriptHandler
    {
        ScriptHandler(
            name: name, collection: "Post", events: [event], phase: phase,
            entry: ScriptEntry(module: "scripts/hooks", function: function))
    }

    @Test(
        "a PRE handler's thrown {statusCode, statusMessage} refuses the write with that status; nothing is stored"
    )
    func preRefuses() async throws {
        let server = try await server([handler("NoSundays", .pre, "refuseSundays")])
        try await server.run([
            APIScenario(
                name: "a Sunday post is refused", method: "POST", path: "/ff/resources/Post",
                body: #"{"guid":"p1","day":"Sunday"}"#, status: 403, code: "script_refused",
                contains: [#""message":"No posts on Sunday.""#], changes: [], scriptRuns: ["NoSundays": 1]),
            APIScenario(
                name: "a Monday post is stored", method: "POST", path: "/ff/resources/Post",
                body: #"{"guid":"p2","day":"Monday"}"#, status: 201, changes: ["create Post/p2"],
                scriptRuns: ["NoSundays": 1]),
            APIScenario(
                name: "only Monday's is listed", method: "GET", path: "/ff/resources/Post", status: 200,
                contains: [#""day":"Monday""#], excludes: ["Sunday"], scriptRuns: [:]),
        ])
        await server.stop()
    }

    @Test("a PRE handler that changes the object changes what is written, on create and on update")
    func preChanges() async throws {
        let server = try await server([
            handler("ShoutCreate", .pre, "shout"), handler("ShoutUpdate", .pre, "shout", on: .update),
        ])
        let created = try await server.client.send("POST", "/ff/resources/Post", json: #"{"title":"hello"}"#)
        #expect(created.status == 201)
        #expect(created.json["title"] as? String == "HELLO")
        #expect(created.json["checkedBy"] as? String == "shout")
        #expect(created.json["clazz"] == nil)
        let guid = try #require(created.json["guid"] as? String)
        let updated = try await server.client.send(
            "PUT", "/ff/resources/Post/\(guid)", json: #"{"title":"again"}"#)
        #expect(updated.status == 200)
        let read = try await server.client.send("GET", "/ff/resources/Post/\(guid)")
        #expect(read.json["title"] as? String == "AGAIN")
        #expect(read.json["version"] as? Int == 2)
        await server.stop()
    }

    @Test("print and ff.logger in PRE and POST handlers log with the id of the request that caused the event")
    func handlerLogsCarryTheRequestId() async throws {
        let log = LogCapture()
        var definition = openRules
        definition.scripts.modules = ["scripts/hooks": Self.hooks]
        definition.scripts.handlers = [
            handler("LogsBefore", .pre, "logs"), handler("LogsAfter", .post, "logs"),
            handler("LogsUpdate", .post, "logs", on: .update),
        ]
        let server = try await TestServer { configuration in
            configuration.appDefinition = definition
            configuration.logSink = { log.append($0) }
        }
        let created = try await server.client.send("POST", "/ff/resources/Post", json: #"{"title":"traced"}"#)
        #expect(created.status == 201)
        let id = try #require(created.header("X-Request-Id"))
        let guid = try #require(created.json["guid"] as? String)
        let updated = try await server.client.send(
            "PUT", "/ff/resources/Post/\(guid)", json: #"{"title":"retraced"}"#)
        let updateID = try #require(updated.header("X-Request-Id"))
        func lines(_ id: String, _ text: String) -> [Substring] {
            log.text.split(separator: "\n").filter { $0.contains(" \(id) ") && $0.contains(text) }
        }
        #expect(lines(id, "handler saw traced").count == 4, "\(log.text)")
        #expect(lines(id, "script=LogsBefore").count == 2)
        #expect(lines(updateID, "handler saw retraced").count == 2, "\(log.text)")
        // A blob member's upload is an update too, and its handler's lines carry its request's id.
        let upload = try await server.client.send(
            "PUT", "/ff/resources/Post/\(guid)/photo", headers: [("Content-Type", "image/jpeg")],
            body: Array(repeating: 0xFF, count: 64))
        #expect(upload.status == 200, "\(upload.text)")
        let uploadID = try #require(upload.header("X-Request-Id"))
        #expect(lines(uploadID, "handler saw retraced").count == 2, "\(log.text)")
        await server.stop()
    }

    @Test("an ASYNC delete handler's data calls carry the rights of the user who deleted the object")
    func asyncDeleteRunsAsTheDeleter() async throws {
        var definition = try AppDefinition.parse(
            Array(
                #"""
                {"collections": {"Diary": {"rules": {"read": "createdBy eq @user.guid"}},
                                 "Tombstone": {"rules": {"create": "public"}}}}
                """#.utf8))
        definition.scripts.modules = ["scripts/hooks": Self.hooks]
        definition.scripts.handlers = [
            ScriptHandler(
                name: "Mourn", collection: "Diary", events: [.delete], phase: .async,
                entry: ScriptEntry(module: "scripts/hooks", function: "mourn"))
        ]
        let server = try await TestServer { configuration in
            configuration.appDefinition = definition
            configuration.passwordHasher = PasswordHasher.cheapForTests()
        }
        _ = try await server.client.register("dana")
        let dana = [("X-Token", try await server.client.login("dana"))]
        var guids: [String] = []
        for _ in 0..<2 {
            let diary = try await server.client.send("POST", "/ff/resources/Diary", json: "{}", headers: dana)
            guids.append(try #require(diary.json["guid"] as? String))
        }
        let deleted = try await server.client.send("DELETE", "/ff/resources/Diary/\(guids[0])", headers: dana)
        #expect(deleted.status == 204)
        // As dana, the handler sees her other diary (an anonymous caller would see none) and her.
        var tombstone: TestResponse?
        // Generous: the run comes from the outbox after the answer, on a worker a loaded machine
        // may be slow to start.
        #expect(
            await eventually(within: 60) {
                tombstone = try? await server.client.send("GET", "/ff/resources/Tombstone/t-\(guids[0])")
                return tombstone?.status == 200
            })
        #expect(tombstone?.json["left"] as? Int == 1, "\(tombstone?.text ?? "")")
        #expect(tombstone?.json["by"] as? String == "dana")
        await server.stop()
    }

    @Test("a failing POST handler leaves the committed write and its answer alone; /metrics counts it")
    func postFailureIsTheServers() async throws {
        let server = try await server([handler("Breaks", .post, "breaks")])
        let created = try await server.client.send("POST", "/ff/resources/Post", json: #"{"title":"kept"}"#)
        #expect(created.status == 201)
        let list = try await server.client.send("GET", "/ff/resources/Post")
        #expect((list.json["items"] as? [[String: Any]])?.count == 1)
        let metrics = try await server.client.send("GET", "/metrics")
        #expect(metrics.text.contains(#"roost_script_runs_total{script="Breaks"} 1"#))
        #expect(
            metrics.text.contains(#"roost_script_failures_total{script="Breaks",code="script_failed"} 1"#))
        await server.stop()
    }

    @Test("a PRE handler's uncaught error fails the write with 500 script_failed, naming no internals")
    func preFailure() async throws {
        let server = try await server([handler("Breaks", .pre, "breaks")])
        let failed = try await server.client.send("POST", "/ff/resources/Post", json: #"{"title":"lost"}"#)
        #expect(failed.status == 500)
        #expect(failed.json["code"] as? String == "script_failed")
        #expect(!(failed.text.contains("TypeError")))
        let list = try await server.client.send("GET", "/ff/resources/Post")
        #expect((list.json["items"] as? [[String: Any]])?.isEmpty == true)
        await server.stop()
    }

    @Test(
        "an update's PRE and POST handlers get the object before and after it; other events' handlers cannot ask"
    )
    func updateEventData() async throws {
        let server = try await server([
            handler("Before", .pre, "recordChange", on: .update),
            handler("After", .post, "recordChange", on: .update),
            handler("OnCreate", .post, "notAnUpdate"),
        ])
        let created = try await server.client.send("POST", "/ff/resources/Post", json: #"{"title":"first"}"#)
        let guid = try #require(created.json["guid"] as? String)
        let updated = try await server.client.send(
            "PUT", "/ff/resources/Post/\(guid)", json: #"{"title":"second"}"#)
        #expect(updated.status == 200)
        let changes = try await server.client.send("GET", "/ff/resources/Change")
        let items = try #require(changes.json["items"] as? [[String: Any]])
        #expect(items.compactMap { $0["error"] as? String } == ["invalid_script_argument"])
        let seen = items.filter { $0["before"] != nil }.map {
            "\($0["before"] as? String ?? "-")→\($0["after"] as? String ?? "-") v\($0["version"] as? Int ?? 0)"
        }
        #expect(seen == ["first→second v1", "first→second v1"])
        await server.stop()
    }
}
