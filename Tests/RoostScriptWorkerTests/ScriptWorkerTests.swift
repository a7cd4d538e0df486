import RoostJSON
import RoostScriptProtocol
import Testing

@testable import RoostScriptWorker

@Suite("Script worker: load, invoke, failures")
struct ScriptWorkerTests {
    @Test("load compiles every module and answers loaded")
    func loadAnswersLoaded() throws {
        let worker = WorkerHarness()
        try worker.load(["scripts/A": "exports.a = 1;", "scripts/B": "exports.b = 2;"])
        #expect(worker.finish() == 0)
    }

    @Test("a syntax error names the module and line, and the running modules stay in force")
    func loadReportsSyntaxError() throws {
        let worker = WorkerHarness()
        try worker.load(["scripts/Good": "exports.f = function () { return 'old'; };"])
        try worker.server.send(
            worker.loadMessage(
                [
                    "scripts/Good": "exports.f = function () { return 'new'; };",
                    "scripts/Bad": "var a = 1;\n\nvar b = 'x;\n",
                ],
                memoryLimit: nil, generation: 2))
        #expect(
            try worker.receive()
                == json(
                    #"{"t":"loadFailed","generation":2,"module":"scripts/Bad","line":3,"message":"SyntaxError: unterminated string (line 3)"}"#
                ))
        try worker.server.send(invocation(id: 1, module: "scripts/Good", function: "f"))
        #expect(
            try worker.receive()
                == json(#"{"t":"done","id":1,"value":"old","response":null,"eventData":null}"#))
        #expect(worker.finish() == 0)
    }

    @Test("module+function gets the argument; data the script did not read does not come back")
    func invokeModuleFunction() throws {
        let worker = WorkerHarness()
        try worker.load(["scripts/Greeter": "exports.greet = function (name) { return {hello: name}; };"])
        try worker.server.send(
            invocation(
                id: 7, module: "scripts/Greeter", function: "greet", argument: "Ann", data: #"{"n":1}"#))
        #expect(
            try worker.receive()
                == json(#"{"t":"done","id":7,"value":{"hello":"Ann"},"response":null,"eventData":null}"#))
        #expect(worker.finish() == 0)
    }

    @Test(
        "a code snippet sees FF_EVENT_DATA_JSON and FF_EXTENSION_REQUEST_DATA_JSON; its completion value is the value"
    )
    func invokeCodeSnippet() throws {
        let worker = WorkerHarness()
        try worker.load([:])
        try worker.server.send(
            snippet(
                id: 2,
                "var d = JSON.parse(FF_EVENT_DATA_JSON); [d.n + 1, FF_EXTENSION_REQUEST_DATA_JSON === FF_EVENT_DATA_JSON]",
                argument: #"{"n":41}"#))
        #expect(
            try worker.receive()
                == json(#"{"t":"done","id":2,"value":[42,true],"response":null,"eventData":null}"#))
        #expect(worker.finish() == 0)
    }

    @Test("a missing function is a failure naming it")
    func missingFunction() throws {
        let worker = WorkerHarness()
        try worker.load(["scripts/Empty": "exports.other = 1;"])
        try worker.server.send(invocation(id: 3, module: "scripts/Empty", function: "nothing"))
        let answer = try worker.receive()
        #expect(answer["error"]?.objectValue?["origin"] == .string("script"))
        #expect(
            answer["error"]?.objectValue?["message"]
                == .string("TypeError: scripts/Empty has no function nothing"))
        #expect(worker.finish() == 0)
    }

    @Test("throw {statusCode, statusMessage} is a refusal with that status")
    func refusal() throws {
        let worker = WorkerHarness()
        try worker.load([
            "scripts/Gate": "exports.check = function () { throw {statusCode: 403, statusMessage: 'no'}; };"
        ])
        try worker.server.send(invocation(id: 4, module: "scripts/Gate", function: "check"))
        #expect(
            try worker.receive()
                == json(
                    #"{"t":"failed","id":4,"error":{"origin":"refusal","statusCode":403,"statusMessage":"no"}}"#
                ))
        try worker.server.send(snippet(id: 5, "throw {statusCode: '400'}"))
        #expect(
            try worker.receive()
                == json(#"{"t":"failed","id":5,"error":{"origin":"refusal","statusCode":400}}"#))
        #expect(worker.finish() == 0)
    }

    @Test("a TypeError fails with origin script, the message, the module and the line")
    func typeError() throws {
        let worker = WorkerHarness()
        try worker.load(["scripts/Broken": "exports.f = function () {\n  var o;\n  return o.foo;\n};"])
        try worker.server.send(invocation(id: 6, module: "scripts/Broken", function: "f"))
        let answer = try worker.receive()
        #expect(answer["t"] == .string("failed"))
        var error = try #require(answer["error"]?.objectValue)
        #expect(error["stack"]?.stringValue?.contains("(scripts/Broken:3)") == true)
        error["stack"] = nil
        #expect(
            error
                == json(
                    #"{"origin":"script","message":"TypeError: cannot read property 'foo' of undefined","module":"scripts/Broken","line":3}"#
                ))
        #expect(worker.finish() == 0)
    }

    @Test("FatFractal's style: implicit globals, exports.f = f, require('ffef/FatFractal') is one object")
    func fatFractalStyle() throws {
        let worker = WorkerHarness()
        let source = """
            var ff = require('ffef/FatFractal');
            function handle(data) {
                total = JSON.parse(data).votes;
                return [helper(), ff === require('ffef/FatFractal'), typeof ff.getObjFromUrl, typeof ff.nothing];
            }
            function helper() { return total * 2; }
            exports.handle = handle;
            """
        try worker.load(["scripts/Votes": source])
        try worker.server.send(
            invocation(id: 8, module: "scripts/Votes", function: "handle", argument: #"{"votes":5}"#))
        #expect(
            try worker.receive()
                == json(
                    #"{"t":"done","id":8,"value":[10,true,"function","undefined"],"response":null,"eventData":null}"#
                ))
        #expect(worker.finish() == 0)
    }

    @Test("print joins its arguments with spaces; console and ff.logger log at their levels")
    func logs() throws {
        let worker = WorkerHarness()
        try worker.load([:])
        try worker.server.send(
            snippet(
                id: 9,
                "print('a', 1, {x: 1}, null); console.warn('w'); require('ffef/FatFractal').logger.error('e'); 'ok'"
            ))
        #expect(
            try worker.receive()
                == json(#"{"t":"log","id":9,"level":"info","message":"a 1 [object Object] null"}"#))
        #expect(try worker.receive() == json(#"{"t":"log","id":9,"level":"warn","message":"w"}"#))
        #expect(try worker.receive() == json(#"{"t":"log","id":9,"level":"error","message":"e"}"#))
        #expect(try worker.receive()["t"] == .string("done"))
        #expect(worker.finish() == 0)
    }

    @Test("a log message is cut at 8 KiB")
    func longLog() throws {
        let worker = WorkerHarness()
        try worker.load([:])
        try worker.server.send(snippet(id: 10, "print(new Array(10000).join('x'))"))
        let log = try worker.receive()
        #expect(log["message"]?.stringValue?.utf8.count == ScriptWorker.maximumLogBytes)
        #expect(try worker.receive()["t"] == .string("done"))
        #expect(worker.finish() == 0)
    }

    @Test("a worker whose channel closes returns 0; a malformed frame or message returns 2")
    func channelEnds() throws {
        let closing = WorkerHarness()
        #expect(closing.finish() == 0)

        let garbled = WorkerHarness()
        garbled.sendRaw([0, 0, 0, 3] + Array("abc".utf8))
        #expect(garbled.waitForExit() == 2)
        _ = garbled.finish()

        let unknown = WorkerHarness()
        try unknown.send(#"{"t":"dance"}"#)
        #expect(unknown.waitForExit() == 2)
        _ = unknown.finish()

        let idleReply = WorkerHarness()
        try idleReply.send(#"{"t":"reply","seq":1,"result":null}"#)
        #expect(idleReply.waitForExit() == 2)
        _ = idleReply.finish()

        let noID = WorkerHarness()
        try noID.send(#"{"t":"invoke","code":"1"}"#)
        #expect(noID.waitForExit() == 2)
        _ = noID.finish()
    }

    @Test("a memory limit too small for the environment fails the load and keeps the running modules")
    func loadOverMemoryLimit() throws {
        let worker = WorkerHarness()
        try worker.load(["scripts/Good": "exports.f = function () { return 'old'; };"])
        try worker.server.send(
            worker.loadMessage(["scripts/Good": "exports.f = 2;"], memoryLimit: 32 << 10, generation: 2))
        let answer = try worker.receive()
        #expect(answer["t"] == .string("loadFailed"))
        #expect(answer["generation"] == .number("2"))
        #expect(answer["message"]?.stringValue?.hasPrefix("the ") == true)
        try worker.server.send(invocation(id: 1, module: "scripts/Good", function: "f"))
        #expect(try worker.receive()["value"] == .string("old"))
        #expect(worker.finish() == 0)
    }

    @Test(
        "the globals: print, console, require and ES built-ins; no Duktape, process, setTimeout or host hooks"
    )
    func globals() throws {
        let worker = WorkerHarness()
        try worker.load([:])
        try worker.server.send(
            snippet(
                id: 1,
                """
                [typeof print, typeof console.log, typeof require, typeof JSON, typeof Duktape, typeof process,
                 typeof setTimeout, typeof host, typeof compile, typeof __roostHost]
                """))
        #expect(
            try worker.receive()["value"]
                == .array(
                    [
                        "function", "function", "function", "object", "undefined", "undefined", "undefined",
                        "undefined",
                        "undefined", "undefined",
                    ].map { .string($0) }))
        #expect(worker.finish() == 0)
    }

    @Test("an invoke before any load runs with no modules and the default memory limit")
    func invokeBeforeLoad() throws {
        let worker = WorkerHarness()
        try worker.server.send(snippet(id: 1, "'ok'"))
        #expect(
            try worker.receive()
                == json(#"{"t":"done","id":1,"value":"ok","response":null,"eventData":null}"#))
        #expect(worker.finish() == 0)
    }
}
