import RoostJSON
import RoostScriptProtocol
import Testing

@testable import RoostScriptWorker

/// The part of FatFractal's `ff` module the worker answers itself.
@Suite("Script worker: FatFractal's helpers")
struct ScriptWorkerFatFractalTests {
    @Test("FFUser, FFUserGroup and FFMetaData build FatFractal's shapes; the active user is an FFUser")
    func constructors() throws {
        let worker = WorkerHarness()
        try worker.load([:])
        try worker.server.send(
            snippet(
                id: 40,
                """
                var ff = require('ffef/FatFractal');
                var user = new ff.FFUser({guid: 'u2', userName: 'ann'});
                var group = new ff.FFUserGroup({groupName: 'crew'});
                var empty = new ff.FFUser();
                var meta = new ff.FFMetaData({clazz: 'Post', guid: 'p1', title: 'dropped', ffRefs: [1]});
                [user.clazz, user.userName, typeof user.addGroup, group.clazz, group.groupName, empty.createdBy,
                 meta, new ff.FFMetaData(), ff.getActiveUser().clazz, ff.getActiveUser().guid]
                """))
        #expect(
            try worker.receive()
                == json(
                    #"{"t":"done","id":40,"value":["FFUser","ann","function","FFUserGroup","crew","system",{"clazz":"Post","guid":"p1","ffRefs":[1]},{"clazz":null,"ffUrl":null,"guid":null,"ffRL":null,"objVersion":null,"createdBy":null,"createdAt":null,"updatedBy":null,"updatedAt":null,"ffRefs":[],"ffUserCanEdit":false},"FFUser","u1"],"response":null,"eventData":null}"#
                ))
        #expect(worker.finish() == 0)
    }

    @Test("references: getRefUrl, refChanged, addReferenceToObj and removeReferenceFromObj")
    func references() throws {
        let worker = WorkerHarness()
        try worker.load([:])
        try worker.server.send(
            snippet(
                id: 41,
                """
                var ff = require('ffef/FatFractal');
                var post = {clazz: 'Post'};
                ff.addReferenceToObj('/ff/resources/FFUser/u1', 'author', post);
                var before = JSON.parse(JSON.stringify(post));
                var errors = [];
                try { ff.addReferenceToObj('/ff/resources/FFUser/u2', 'author', post); } catch (e) { errors.push(e.message); }
                try { ff.addReferenceToObj('not a url', 'x', post); } catch (e) { errors.push(e.message); }
                ff.addReferenceToObj('/ff/resources/Blob/b1', 'image', post);
                ff.removeReferenceFromObj('author', post);
                [ff.getRefUrl(before, 'author'), ff.getRefUrl(post, 'author'), ff.refChanged(before, post, 'author'),
                 ff.refChanged(before, post, 'none'), post.ffRefs, errors]
                """))
        #expect(
            try worker.receive()
                == json(
                    #"{"t":"done","id":41,"value":["/ff/resources/FFUser/u1",null,true,false,[{"name":"image","type":"FFO","url":"/ff/resources/Blob/b1"}],["addReferenceToObj: the object already has a reference named author","addReferenceToObj: not a url is not an ffUrl such as /ff/resources/Collection/guid"]],"response":null,"eventData":null}"#
                ))
        #expect(worker.finish() == 0)
    }

    @Test(
        "getUser asks the server for the user by guid (never a URL it builds) with the asUserGuid given, and wraps it as an FFUser"
    )
    func getUser() throws {
        let worker = WorkerHarness()
        try worker.load([:])
        try worker.server.send(
            snippet(
                id: 42,
                "var ff = require('ffef/FatFractal'); var u = ff.getUser('u9', 'system'); [u.clazz, u.userName, ff.getUser('u8')]"
            ))
        #expect(
            try worker.receive()
                == json(
                    #"{"t":"call","id":42,"seq":1,"method":"getUser","args":["u9","system"]}"#))
        try worker.send(#"{"t":"reply","seq":1,"result":{"guid":"u9","userName":"zed"}}"#)
        #expect(
            try worker.receive()
                == json(#"{"t":"call","id":42,"seq":2,"method":"getUser","args":["u8",null]}"#))
        try worker.send(#"{"t":"reply","seq":2,"result":null}"#)
        #expect(
            try worker.receive()
                == json(
                    #"{"t":"done","id":42,"value":["FFUser","zed",null],"response":null,"eventData":null}"#))
        #expect(worker.finish() == 0)
    }

    @Test(
        "functions Roost does not offer throw an error naming them; the log helpers, debug and bypassCache work"
    )
    func unavailableAndSwitches() throws {
        let worker = WorkerHarness()
        try worker.load([:])
        try worker.server.send(
            snippet(
                id: 43,
                """
                var ff = require('ffef/FatFractal');
                ff.logger.forceInfo('fi'); ff.logger.forceWarn('fw'); ff.logger.trace('t');
                var caught;
                try { ff.getCursorForQuery('/Post'); } catch (e) { caught = [e instanceof Error, e.message, e.statusCode, e.code]; }
                var before = ff.isDebug(); ff.setDebug(1);
                [caught, before, ff.isDebug(), ff.bypassCache(ff.getUser) === ff.getUser, ff.getHttpRequestData(),
                 ff.getHttpsAppAddress()]
                """))
        #expect(try worker.receive() == json(#"{"t":"log","id":43,"level":"info","message":"fi"}"#))
        #expect(try worker.receive() == json(#"{"t":"log","id":43,"level":"warn","message":"fw"}"#))
        #expect(try worker.receive() == json(#"{"t":"log","id":43,"level":"debug","message":"t"}"#))
        #expect(
            try worker.receive()
                == json(
                    #"{"t":"done","id":43,"value":[[true,"ff.getCursorForQuery is not available on Roost",501,"script_call_unavailable"],false,true,true,null,"https://app.example"],"response":null,"eventData":null}"#
                ))
        #expect(worker.finish() == 0)
    }

    @Test(
        "require('fs') and require('io') load (gkc's PasswordReset and DataImport require them); a call throws 501"
    )
    func fileModulesLoadAndRefuseCalls() throws {
        let worker = WorkerHarness()
        try worker.load([:])
        try worker.server.send(
            snippet(
                id: 45,
                """
                var fs = require('fs'); var io = require('io');
                var caught;
                try { fs.readFileSync('/etc/passwd'); } catch (e) { caught = [e instanceof Error, e.message, e.statusCode, e.code]; }
                var other;
                try { io.File('x'); } catch (e) { other = e.message; }
                [typeof fs, caught, other]
                """))
        #expect(
            try worker.receive()
                == json(
                    #"{"t":"done","id":45,"value":["object",[true,"require('fs').readFileSync is not available on Roost: scripts have no file system; store files as blobs",501,"script_call_unavailable"],"require('io').File is not available on Roost: scripts have no file system; store files as blobs"],"response":null,"eventData":null}"#
                ))
        #expect(worker.finish() == 0)
    }

    @Test("an extension's getHttpRequestData is its request without the body")
    func httpRequestData() throws {
        let worker = WorkerHarness()
        try worker.load([:])
        var message = snippet(id: 44, "require('ffef/FatFractal').getHttpRequestData()")
        message["kind"] = .string("extension")
        message["data"] = try JSONParser.parse(
            #"{"httpMethod":"GET","httpRequestUri":"/ff/ext/Stats","httpParameters":{"x":"1"},"httpHeaders":{},"httpCookies":{},"httpContent":{"a":1}}"#
        )
        try worker.server.send(message)
        #expect(
            try worker.receive()
                == json(
                    #"{"t":"done","id":44,"value":{"httpMethod":"GET","httpRequestUri":"/ff/ext/Stats","httpParameters":{"x":"1"},"httpHeaders":{},"httpCookies":{}},"response":null,"eventData":null}"#
                ))
        #expect(worker.finish() == 0)
    }

    @Test(
        "characters beyond U+FFFF written as \\u escapes leave the worker as UTF-8; a lone surrogate as U+FFFD"
    )
    func surrogates() throws {
        let worker = WorkerHarness()
        try worker.load([:])
        try worker.server.send(
            snippet(
                id: 45,
                """
                var ff = require('ffef/FatFractal');
                var face = '\\uD83D\\uDE00';
                print('log ' + face);
                var read = ff.getObjFromUri('/Things/' + face);
                [face, String.fromCharCode(0xD800) + 'x', read]
                """))
        #expect(try worker.receive() == json(#"{"t":"log","id":45,"level":"info","message":"log 😀"}"#))
        #expect(
            try worker.receive()
                == json(#"{"t":"call","id":45,"seq":1,"method":"getObjFromUri","args":["/Things/😀"]}"#))
        try worker.send(#"{"t":"reply","seq":1,"result":{"name":"\uD83D\uDE00"}}"#)
        #expect(
            try worker.receive()
                == json(
                    #"{"t":"done","id":45,"value":["😀","\#u{FFFD}x",{"name":"😀"}],"response":null,"eventData":null}"#
                ))
        #expect(worker.finish() == 0)
    }
}
