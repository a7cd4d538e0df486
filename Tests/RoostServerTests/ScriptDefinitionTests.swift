import Foundation
import RoostCore
import RoostTestSupport
import Testing

/// `handlers` and `extensions` in roost.json: what they declare, and every refusal with its field.
@Suite("Script definitions")
struct ScriptDefinitionTests {
    static let modules = ["scripts/Votes": "exports.onCreate = function (vote) { return vote; };"]

    static func parse(_ text: String, modules: [String: String] = modules) throws(AppDefinitionError)
        -> AppDefinition
    {
        try AppDefinition.parse(Array(text.utf8), modules: modules)
    }

    @Test("handlers keep their order and defaults; extensions are secured and run as the caller by default")
    func declarations() throws {
        let definition = try Self.parse(
            """
            {"handlers": {
               "VoteCreate": {"collection": "Vote", "events": ["create", "update"], "phase": "post",
                              "script": "scripts/Votes", "function": "onCreate"},
               "Audit": {"collection": "Vote", "events": ["delete"], "phase": "async", "code": "print(1)",
                         "runAs": "system"},
               "Check": {"collection": "Vote", "events": ["create"], "phase": "pre", "code": "1"}
             },
             "extensions": {
               "Stats": {"script": "scripts/Votes", "function": "onCreate"},
               "Open": {"secured": false, "code": "2", "runAs": "system"}
             }}
            """)
        let scripts = definition.scripts
        #expect(scripts.handlers.map(\.name) == ["VoteCreate", "Audit", "Check"])
        #expect(
            scripts.handlers[0]
                == ScriptHandler(
                    name: "VoteCreate", collection: "Vote", events: [.create, .update], phase: .post,
                    entry: ScriptEntry(module: "scripts/Votes", function: "onCreate"), rights: .caller))
        #expect(scripts.handlers[1].entry == ScriptEntry(code: "print(1)"))
        #expect(scripts.handlers[1].rights == .system)
        #expect(scripts.handlers(for: .create, in: "Vote", phase: .pre).map(\.name) == ["Check"])
        #expect(
            scripts.extensions["Stats"]
                == ScriptExtension(
                    name: "Stats", entry: ScriptEntry(module: "scripts/Votes", function: "onCreate")))
        #expect(scripts.extensions["Open"]?.secured == false)
        #expect(scripts.extensions["Open"]?.rights == .system)
        #expect(scripts.modules == Self.modules)
    }

    static let handler = #""collection":"Vote","events":["create"],"phase":"post""#
    static let call = #""script":"scripts/Votes","function":"onCreate""#
    static let rewrite =
        "; declare it under 'handlers' or 'extensions' instead (see docs/scripts.md)"

    static let refusals: [(String, String)] = [
        (#"{"handlers":[]}"#, "handlers: \(tooManyHandlers)"),
        (
            #"{"handlers":{"Bad-Name":{}}}"#,
            "handlers.Bad-Name: a handler's name is 1 to 64 letters, digits or '_'"
        ),
        (
            #"{"handlers":{"H":[]}}"#,
            "handlers.H: a handler is an object with 'collection', 'events', 'phase', and 'script' and 'function' or 'code'"
        ),
        (
            #"{"handlers":{"H":{"colection":"Vote"}}}"#,
            "handlers.H.colection: unknown key; expected 'collection', 'events', 'phase', 'script', 'function', 'code', 'runAs'"
        ),
        (
            #"{"handlers":{"H":{"events":["create"]}}}"#,
            "handlers.H.collection: the collection whose writes run the handler: a letter, then up to 63 letters, digits or '_'"
        ),
        (#"{"handlers":{"H":{"collection":"Vote","events":[]}}}"#, "handlers.H.events: \(events)"),
        (
            #"{"handlers":{"H":{"collection":"Vote","events":["create","create"]}}}"#,
            "handlers.H.events: \(events)"
        ),
        (#"{"handlers":{"H":{"collection":"Vote","events":["Create"]}}}"#, "handlers.H.events: \(events)"),
        (
            #"{"handlers":{"H":{"collection":"Vote","events":["create"],"phase":"before"}}}"#,
            "handlers.H.phase: 'pre' (before the write, may refuse or change it), 'post' (after the write, before the answer) or 'async' (after the answer, retried)"
        ),
        (
            #"{"handlers":{"H":{\#(handler),\#(call),"code":"1"}}}"#,
            "handlers.H: give 'script' and 'function', or 'code', not both"
        ),
        (
            #"{"handlers":{"H":{\#(handler),"function":"onCreate"}}}"#,
            "handlers.H: give 'script' and 'function' (a module in the scripts folder and the function it exports) or 'code' (a JavaScript snippet)"
        ),
        (
            #"{"handlers":{"H":{\#(handler),"script":"Votes","function":"f"}}}"#,
            "handlers.H.script: \(moduleID)"
        ),
        (
            #"{"handlers":{"H":{\#(handler),"script":"scripts/Votes.js","function":"f"}}}"#,
            "handlers.H.script: \(moduleID); leave out '.js': \"scripts/Votes\""
        ),
        (
            #"{"handlers":{"H":{\#(handler),"script":"scripts/../x","function":"f"}}}"#,
            "handlers.H.script: \(moduleID)"
        ),
        (
            #"{"handlers":{"H":{\#(handler),"script":"scripts/Missing","function":"f"}}}"#,
            "handlers.H.script: no file scripts/Missing.js: put it in the scripts folder next to roost.json"
        ),
        (
            #"{"handlers":{"H":{\#(handler),"script":"scripts/Votes","function":"on-create"}}}"#,
            "handlers.H.function: \(function)"
        ),
        (#"{"handlers":{"H":{\#(handler),"script":"scripts/Votes"}}}"#, "handlers.H.function: \(function)"),
        (#"{"handlers":{"H":{\#(handler),"code":""}}}"#, "handlers.H.code: \(code)"),
        (
            #"{"handlers":{"H":{\#(handler),"code":"\#(String(repeating: "x", count: 65537))"}}}"#,
            "handlers.H.code: \(code)"
        ),
        (
            #"{"handlers":{"H":{\#(handler),"code":"1","runAs":"admin"}}}"#,
            "handlers.H.runAs: 'caller' (the default: the rules apply as to the user who caused the call) or 'system' (no rule applies)"
        ),
        (#"{"extensions":[]}"#, "extensions: \(tooManyExtensions)"),
        (
            #"{"extensions":{"a/b":{}}}"#,
            "extensions.a/b: an extension's name (its URL is /ff/ext/<name>) is 1 to 64 letters, digits or '_'"
        ),
        (
            #"{"extensions":{"E":"code"}}"#,
            "extensions.E: an extension is an object with 'script' and 'function', or 'code'"
        ),
        (
            #"{"extensions":{"E":{"collection":"Vote"}}}"#,
            "extensions.E.collection: unknown key; expected 'secured', 'script', 'function', 'code', 'runAs'"
        ),
        (
            #"{"extensions":{"E":{"secured":"yes","code":"1"}}}"#,
            "extensions.E.secured: true (the default: logged-in callers only) or false (anyone may call it)"
        ),
        (
            #"{"extensions":{"E":{"script":"scripts/Gone","function":"f"}}}"#,
            "extensions.E.script: \(missing("Gone"))"
        ),
        (
            #"{"serverScripts":"CREATE HANDLER"}"#,
            "serverScripts: a list of FFDL lines (CREATE HANDLER or CREATE EXTENSION)"
        ),
        (#"{"serverScripts":[1]}"#, "serverScripts[0]: an FFDL line (CREATE HANDLER or CREATE EXTENSION)"),
        (
            #"{"serverScripts":["CREATE HANDLER H POST ON /Vote GRABBAG_ADD AS javascript:x()"]}"#,
            "serverScripts[0]: Roost runs handlers on Create, Update and Delete; 'GRABBAG_ADD' has no equivalent\(rewrite)"
        ),
        (
            #"{"handlers":{"H":{\#(handler),"code":"1"}},"serverScripts":["CREATE HANDLER H POST ON /Vote Create AS javascript:x()"]}"#,
            "serverScripts[0]: a handler named 'H' is declared twice\(rewrite)"
        ),
        (
            #"{"serverScripts":["CREATE EXTENSION /Stats AS javascript:require('scripts/Gone').run();"]}"#,
            "serverScripts[0].script: \(missing("Gone"))"
        ),
        (#"{"handlers":\#(many(101, handler: true))}"#, "handlers: \(tooManyHandlers)"),
        (#"{"extensions":\#(many(101, handler: false))}"#, "extensions: \(tooManyExtensions)"),
    ]

    static let tooManyHandlers =
        #"an object of at most 100 handlers by name, such as {"VoteCreate": {"collection": "Vote", "events": ["create"], "phase": "post", "script": "scripts/Votes", "function": "onCreate"}}"#
    static let tooManyExtensions =
        #"an object of at most 100 extensions by name, such as {"Stats": {"script": "scripts/Stats", "function": "run"}}"#
    static let events = "a non-empty list of 'create', 'update' and 'delete', each at most once"
    static let moduleID =
        #"a module id such as "scripts/Votes" (the file scripts/Votes.js next to roost.json)"#
    static let function =
        #"the name of the function scripts/Votes.js exports, a JavaScript identifier such as "onCreate""#
    static let code = "a JavaScript snippet of 1 to 65536 bytes; put longer code in a file under scripts/"
    static func missing(_ name: String) -> String {
        "no file scripts/\(name).js: put it in the scripts folder next to roost.json"
    }

    static func many(_ count: Int, handler: Bool) -> String {
        let body = handler ? #"{\#(Self.handler),"code":"1"}"# : #"{"code":"1"}"#
        return "{" + (0..<count).map { #""N\#($0)":\#(body)"# }.joined(separator: ",") + "}"
    }

    @Test("every refusal names its field and says what is expected", arguments: refusals)
    func refusal(_ text: String, _ expected: String) {
        #expect(throws: AppDefinitionError.self) { try Self.parse(text) }
        do {
            _ = try Self.parse(text)
        } catch {
            #expect(error.description == expected)
        }
    }

    @Test("100 handlers and 100 extensions are accepted")
    func atTheLimits() throws {
        let definition = try Self.parse(
            #"{"handlers":\#(Self.many(100, handler: true)),"extensions":\#(Self.many(100, handler: false))}"#
        )
        #expect(definition.scripts.handlers.count == 100)
        #expect(definition.scripts.extensions.count == 100)
    }

    static let moduleRefusals: [([String: String], String)] = [
        (["Votes": ""], "Votes: not a module id of the form scripts/<path without .js>"),
        (["scripts/a.js": ""], "scripts/a.js: not a module id of the form scripts/<path without .js>"),
        (
            Dictionary(uniqueKeysWithValues: (0...500).map { ("scripts/m\($0)", "") }),
            "scripts: more than 500 script files"
        ),
        (
            ["scripts/Big": String(repeating: "x", count: (1 << 20) + 1)],
            "scripts/Big.js: larger than 1 MiB, the most one script file may hold"
        ),
        (
            Dictionary(
                uniqueKeysWithValues: (0...8).map {
                    ("scripts/f\($0)", String(repeating: "x", count: 1 << 20))
                }),
            "scripts/f8.js: the script files add up to more than 8 MiB"
        ),
    ]

    @Test(
        "modules from anywhere (a stored definition too) keep the scripts folder's limits",
        arguments: moduleRefusals)
    func moduleLimits(_ modules: [String: String], _ expected: String) {
        do {
            _ = try Self.parse("{}", modules: modules)
            Issue.record("accepted")
        } catch {
            #expect(error.description == expected)
        }
    }

    @Test("the old serverScripts lines become the handlers and extensions an import makes now")
    func serverScriptsAreTranslated() throws {
        let definition = try Self.parse(
            #"""
            {"serverScripts": [
              "CREATE HANDLER VoteCreate POST ON /Vote Create as javascript:require('scripts/Votes').onCreate(FF_EVENT_DATA_JSON);",
              "CREATE EXTENSION /Stats UNSECURED AS javascript:print('hi');"
            ]}
            """#)
        #expect(
            definition.scripts.handlers == [
                ScriptHandler(
                    name: "VoteCreate", collection: "Vote", events: [.create], phase: .post,
                    entry: ScriptEntry(module: "scripts/Votes", function: "onCreate"), rights: .system)
            ])
        #expect(
            definition.scripts.extensions["Stats"]
                == ScriptExtension(
                    name: "Stats", secured: false, entry: ScriptEntry(code: "print('hi');"), rights: .system))
    }

    @Test("a shared definition travels as one bundle with its modules; an old stored text still reads")
    func bundles() throws {
        let text = Array(#"{"handlers":{"H":{\#(Self.handler),\#(Self.call)}}}"#.utf8)
        let files = AppDefinitionFiles(
            text: text, modules: Self.modules.merging(["scripts/Other": "1"]) { a, _ in a })
        let stored = try AppDefinitionFiles(stored: files.bundle)
        #expect(stored == files)
        #expect(try stored.parse().scripts.handlers.map(\.name) == ["H"])
        // Written the same way for the same files, so an unchanged definition keeps its revision.
        var reordered = AppDefinitionFiles(text: text)
        for (id, source) in files.modules.sorted(by: { $0.key > $1.key }) { reordered.modules[id] = source }
        #expect(reordered.bundle == files.bundle)
        #expect(
            String(decoding: files.bundle, as: UTF8.self).hasPrefix(
                #"{"roostDefinitionBundle":1,"definition":"#))
        // What instances stored before definitions carried scripts: the bare roost.json.
        let old = Array(#"{"collections":{"Note":{"rules":{"create":"none"}}}}"#.utf8)
        #expect(try AppDefinitionFiles(stored: old) == AppDefinitionFiles(text: old))
        #expect(try AppDefinitionFiles(stored: old).parse().collections["Note"] != nil)
        do {
            _ = try AppDefinitionFiles(stored: Array(#"{"roostDefinitionBundle":2,"definition":"{}"}"#.utf8))
            Issue.record("a newer bundle was read")
        } catch {
            #expect(
                error.description
                    == "roostDefinitionBundle: the stored definition was written by a newer version of Roost; upgrade this instance"
            )
        }
    }
}

extension ScriptDefinitionTests {
    @Test("the docs' handlers and extensions are a valid definition with the files it lists")
    func readmeExample() throws {
        let definition = try Self.parse(
            DocumentationBlocks.first(
                "json", after: "Defining handlers and extensions", in: "docs/scripts.md"),
            modules: [
                "scripts/WouldYaEventHandlers": "", "scripts/AggregateStats": "", "scripts/lib/util": "",
            ])
        #expect(definition.scripts.handlers.map(\.name) == ["WouldYaCreate", "CheckVote"])
        #expect(definition.scripts.handlers[1].phase == .pre)
        #expect(definition.scripts.extensions["Hello"]?.secured == false)
        #expect(definition.scripts.extensions["Hello"]?.rights == .system)
    }
}
