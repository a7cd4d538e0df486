import RoostJSON
import RoostScriptProtocol
import Testing

@testable import RoostScriptWorker

@Suite("Script worker: ff calls, response, event data, require, memory")
struct ScriptWorkerCallTests {
    static let reader = """
        var ff = require('ffef/FatFractal');
        exports.name = function (url) { return ff.getObjFromUrl(url).name; };
        exports.caught = function (url) {
            try { ff.getObjFromUrl(url); return 'no error'; }
            catch (e) { return [e instanceof Error, e.statusCode, e.message, e.statusMessage, e.code]; }
        };
        exports.uncaught = function (url) { ff.deleteObj(url); return 'unreachable'; };
        exports.two = function () {
            var created = ff.createObjAtUri({clazz: 'Vote', f: undefined, g: function () {}}, '/Vote');
            return [created.guid, ff.getAllGuids('/Vote').length];
        };
        """

    @Test("an ff call goes out as call and its reply's result comes back")
    func callRoundTrip() throws {
        let worker = WorkerHarness()
        try worker.load(["scripts/Reader": Self.reader])
        try worker.server.send(
            invocation(
                id: 11, module: "scripts/Reader", function: "name", argument: "/ff/resources/WouldYa/abc"))
        #expect(
            try worker.receive()
                == json(
                    #"{"t":"call","id":11,"seq":1,"method":"getObjFromUrl","args":["/ff/resources/WouldYa/abc"]}"#
                ))
        try worker.send(#"{"t":"reply","seq":1,"result":{"name":"Ada"}}"#)
        #expect(
            try worker.receive()
                == json(#"{"t":"done","id":11,"value":"Ada","response":null,"eventData":null}"#))
        #expect(worker.finish() == 0)
    }

    @Test("sequence numbers count per invocation; undefined and functions become null")
    func twoCalls() throws {
        let worker = WorkerHarness()
        try worker.load(["scripts/Reader": Self.reader])
        try worker.server.send(invocation(id: 12, module: "scripts/Reader", function: "two"))
        #expect(
            try worker.receive()
                == json(
                    #"{"t":"call","id":12,"seq":1,"method":"createObjAtUri","args":[{"clazz":"Vote"},"/Vote"]}"#
                ))
        try worker.send(#"{"t":"reply","seq":1,"result":{"clazz":"Vote","guid":"g1"}}"#)
        #expect(
            try worker.receive()
                == json(#"{"t":"call","id":12,"seq":2,"method":"getAllGuids","args":["/Vote"]}"#))
        try worker.send(#"{"t":"reply","seq":2,"result":["g1","g2"]}"#)
        #expect(
            try worker.receive()
                == json(#"{"t":"done","id":12,"value":["g1",2],"response":null,"eventData":null}"#))
        #expect(worker.finish() == 0)
    }

    @Test("an error reply throws a catchable Error with statusCode, statusMessage and code")
    func callErrorCaught() throws {
        let worker = WorkerHarness()
        try worker.load(["scripts/Reader": Self.reader])
        try worker.server.send(
            invocation(id: 13, module: "scripts/Reader", function: "caught", argument: "/X/1"))
        _ = try worker.receive()
        try worker.send(
            #"{"t":"reply","seq":1,"error":{"statusCode":404,"statusMessage":"Not there","code":"not_found"}}"#
        )
        #expect(
            try worker.receive()
                == json(
                    #"{"t":"done","id":13,"value":[true,404,"Not there","Not there","not_found"],"response":null,"eventData":null}"#
                ))
        #expect(worker.finish() == 0)
    }

    @Test("an uncaught ff error fails with origin api")
    func callErrorUncaught() throws {
        let worker = WorkerHarness()
        try worker.load(["scripts/Reader": Self.reader])
        try worker.server.send(
            invocation(id: 14, module: "scripts/Reader", function: "uncaught", argument: "/X/1"))
        #expect(try worker.receive()["method"] == .string("deleteObj"))
        try worker.send(
            #"{"t":"reply","seq":1,"error":{"statusCode":403,"statusMessage":"Forbidden","code":"forbidden"}}"#
        )
        #expect(
            try worker.receive()
                == json(
                    #"{"t":"failed","id":14,"error":{"origin":"api","statusCode":403,"statusMessage":"Forbidden","code":"forbidden"}}"#
                ))
        #expect(worker.finish() == 0)
    }

    @Test("a reply for another call is a protocol error: the worker exits 2")
    func replyOutOfTurn() throws {
        let worker = WorkerHarness()
        try worker.load(["scripts/Reader": Self.reader])
        try worker.server.send(
            invocation(id: 15, module: "scripts/Reader", function: "name", argument: "/X/1"))
        _ = try worker.receive()
        try worker.send(#"{"t":"reply","seq":9,"result":null}"#)
        #expect(worker.waitForExit() == 2)
        _ = worker.finish()
    }

    @Test("ff.response() is one object per invocation and comes back in done, as JSON and as text/html")
    func response() throws {
        let worker = WorkerHarness()
        try worker.load([:])
        try worker.server.send(
            snippet(
                id: 16,
                """
                var ff = require('ffef/FatFractal');
                var r = ff.response(); r.result = {count: 2}; r.responseCode = '200'; r.statusMessage = 'OK';
                ff.response() === r
                """))
        #expect(
            try worker.receive()
                == json(
                    #"{"t":"done","id":16,"value":true,"response":{"result":{"count":2},"responseCode":"200","statusMessage":"OK","mimeType":null},"eventData":null}"#
                ))
        try worker.server.send(
            snippet(
                id: 17,
                "var r = require('ffef/FatFractal').response(); r.result = '<p>hi</p>'; r.mimeType = 'text/html';"
            ))
        #expect(
            try worker.receive()
                == json(
                    #"{"t":"done","id":17,"value":"text/html","response":{"result":"<p>hi</p>","responseCode":null,"statusMessage":null,"mimeType":"text/html"},"eventData":null}"#
                ))
        try worker.server.send(snippet(id: 18, "1"))
        #expect(try worker.receive()["response"] == .null)
        #expect(worker.finish() == 0)
    }

    @Test(
        "event data changed by the script comes back as eventData; the user and address come from the context"
    )
    func eventData() throws {
        let worker = WorkerHarness()
        try worker.load([:])
        var message = snippet(
            id: 19,
            """
            var ff = require('ffef/FatFractal');
            var d = ff.getEventHandlerData(); d.score = 10; delete d.tmp;
            [ff.getEventHandlerData() === ff.getExtensionRequestData(), ff.getActiveUser().guid, ff.getHttpAppAddress()]
            """, data: #"{"name":"a","tmp":1}"#)
        message["returnsEventData"] = .bool(true)
        try worker.server.send(message)
        #expect(
            try worker.receive()
                == json(
                    #"{"t":"done","id":19,"value":[true,"u1","https://app.example"],"response":null,"eventData":{"name":"a","score":10}}"#
                ))
        #expect(worker.finish() == 0)
    }

    @Test(
        "a POST handler's object does not come back; without an argument the function gets the data as JSON"
    )
    func dataOnce() throws {
        let worker = WorkerHarness()
        try worker.load([
            "scripts/Votes":
                "exports.handle = function (text) { require('ffef/FatFractal').getEventHandlerData().n = 2; return [text, FF_EVENT_DATA_JSON]; };"
        ])
        var message = invocation(
            id: 30, module: "scripts/Votes", function: "handle", data: #"{"n":1,"s":"a\"b"}"#)
        message["argument"] = nil
        try worker.server.send(message)
        #expect(
            try worker.receive()
                == json(
                    #"{"t":"done","id":30,"value":["{\"n\":1,\"s\":\"a\\\"b\"}","{\"n\":1,\"s\":\"a\\\"b\"}"],"response":null,"eventData":null}"#
                ))
        #expect(worker.finish() == 0)
    }

    @Test("without activeUser in the context, ff.getActiveUser() asks the server once per invocation")
    func activeUserAsked() throws {
        let worker = WorkerHarness()
        try worker.load([:])
        var message = snippet(
            id: 31,
            "var ff = require('ffef/FatFractal'); [ff.getActiveUser().guid, ff.getActiveUser().userName]")
        message["context"] = .object(json(#"{"appAddress":"https://app.example"}"#))
        try worker.server.send(message)
        #expect(
            try worker.receive() == json(#"{"t":"call","id":31,"seq":1,"method":"getActiveUser","args":[]}"#))
        try worker.send(#"{"t":"reply","seq":1,"result":{"guid":"u7","userName":"ann"}}"#)
        #expect(
            try worker.receive()
                == json(#"{"t":"done","id":31,"value":["u7","ann"],"response":null,"eventData":null}"#))
        #expect(worker.finish() == 0)
    }

    @Test("require resolves relative ids and runs each module's body once")
    func requireCaches() throws {
        let worker = WorkerHarness()
        try worker.load([
            "scripts/lib/counter": "print('body'); var n = 0; exports.next = function () { return ++n; };",
            "scripts/lib/main": """
            var c = require('./counter');
            exports.f = function () {
                return [c === require('../lib/counter'), c.next(), require('scripts/lib/counter.js').next()];
            };
            """,
        ])
        try worker.server.send(invocation(id: 20, module: "scripts/lib/main", function: "f"))
        #expect(try worker.receive() == json(#"{"t":"log","id":20,"level":"info","message":"body"}"#))
        #expect(
            try worker.receive()
                == json(#"{"t":"done","id":20,"value":[true,1,2],"response":null,"eventData":null}"#))
        try worker.server.send(invocation(id: 21, module: "scripts/lib/main", function: "f"))
        #expect(
            try worker.receive()
                == json(#"{"t":"done","id":21,"value":[true,3,4],"response":null,"eventData":null}"#))
        try worker.server.send(snippet(id: 22, "require('scripts/nowhere')"))
        #expect(
            try worker.receive()["error"]?.objectValue?["message"]
                == .string("Error: Cannot find module 'scripts/nowhere'"))
        #expect(worker.finish() == 0)
    }

    @Test("a memory bomb fails with origin memory and the next invocation runs on a fresh heap")
    func memoryBomb() throws {
        let worker = WorkerHarness()
        try worker.load([:], memoryLimit: 8 << 20)
        // Each string differs: Duktape interns strings, so pushing one same string grows by a slot only.
        try worker.server.send(
            snippet(id: 23, "var a = []; while (true) a.push(new Array(100000).join('x') + a.length);"))
        #expect(try worker.receive() == json(#"{"t":"failed","id":23,"error":{"origin":"memory"}}"#))
        try worker.server.send(snippet(id: 24, "[typeof a, 1 + 1]"))
        #expect(
            try worker.receive()
                == json(#"{"t":"done","id":24,"value":["undefined",2],"response":null,"eventData":null}"#))
        #expect(worker.finish() == 0)
    }

    @Test("a channel closed while a script waits for a reply ends the worker with 0")
    func closedDuringCall() throws {
        let worker = WorkerHarness()
        try worker.load(["scripts/Reader": Self.reader])
        try worker.server.send(
            invocation(id: 25, module: "scripts/Reader", function: "caught", argument: "/X/1"))
        #expect(try worker.receive()["t"] == .string("call"))
        #expect(worker.finish() == 0)
    }

    @Test("a script that replaces JSON.stringify breaks neither ff calls nor its answer")
    func replacedJSON() throws {
        let worker = WorkerHarness()
        try worker.load([:])
        try worker.server.send(
            snippet(
                id: 26,
                "JSON.stringify = function () { return 'broken'; }; require('ffef/FatFractal').getAllGuids('/A')"
            ))
        #expect(
            try worker.receive()
                == json(#"{"t":"call","id":26,"seq":1,"method":"getAllGuids","args":["/A"]}"#))
        try worker.send(#"{"t":"reply","seq":1,"result":["g"]}"#)
        #expect(
            try worker.receive()
                == json(#"{"t":"done","id":26,"value":["g"],"response":null,"eventData":null}"#))
        #expect(worker.finish() == 0)
    }

    @Test("arguments or an answer over the 16 MiB frame limit fail the script, not the worker")
    func oversized() throws {
        let worker = WorkerHarness()
        try worker.load([:], memoryLimit: 160 << 20)
        let big = "var s = 'x'; while (s.length < (16 << 20)) s += s;"
        try worker.server.send(
            snippet(
                id: 27,
                big
                    + "try { require('ffef/FatFractal').getAllGuids(s); } catch (e) { [e.statusCode, e.code] }"
            ))
        #expect(
            try worker.receive()
                == json(
                    #"{"t":"done","id":27,"value":[413,"script_message_too_large"],"response":null,"eventData":null}"#
                ))
        try worker.server.send(snippet(id: 28, big + "s"))
        #expect(
            try worker.receive()
                == json(
                    #"{"t":"failed","id":28,"error":{"origin":"script","message":"RangeError: the script's answer is over the 16 MiB frame limit"}}"#
                ))
        try worker.server.send(snippet(id: 29, "require('ffef/FatFractal').getAllGuids('/A')"))
        #expect(try worker.receive()["seq"] == .number("1"))
        #expect(worker.finish() == 0)
    }
}
