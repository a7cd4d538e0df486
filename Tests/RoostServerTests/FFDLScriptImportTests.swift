import Foundation
import RoostCore
import RoostJSON
import RoostTestSupport
import Testing

/// `roost app import`: FatFractal's CREATE HANDLER and CREATE EXTENSION lines become handlers and
/// extensions, and FatFractal's ff-scripts folder the scripts folder.
@Suite("FFDL import of handlers and extensions")
struct FFDLScriptImportTests {
    /// The two lines of hoodyoodoo's application.ffdl that issue 19 quotes.
    static let hoodyoodoo = """
        CREATE HANDLER WouldYaCreate POST ON /WouldYa Create as javascript:var h = require ('scripts/WouldYaEventHandlers'); h.handleWouldYaCreate (FF_EVENT_DATA_JSON);
        CREATE EXTENSION /Stats AS javascript:var f = require ('scripts/AggregateStats'); f.aggregateStats (FF_EXTENSION_REQUEST_DATA_JSON);
        """

    @Test("hoodyoodoo's handler and extension run their module's function, with system rights")
    func hoodyoodoosLines() throws {
        let result = FFDLImport(ffdl: Self.hoodyoodoo)
        #expect(
            result.definitionText == """
                {
                  "handlers": {
                    "WouldYaCreate": {
                      "collection": "WouldYa",
                      "events": ["create"],
                      "phase": "post",
                      "script": "scripts/WouldYaEventHandlers",
                      "function": "handleWouldYaCreate",
                      "runAs": "system"
                    }
                  },
                  "extensions": {
                    "Stats": {
                      "script": "scripts/AggregateStats",
                      "function": "aggregateStats",
                      "runAs": "system"
                    }
                  }
                }

                """)
        #expect(
            result.lines.map { "\($0.number) \($0.outcome.rawValue): \($0.reason)" } == [
                "1 translated: handlers.WouldYaCreate: runs scripts/WouldYaEventHandlers.js, function handleWouldYaCreate with system rights, as FatFractal did",
                "2 translated: extensions.Stats: runs scripts/AggregateStats.js, function aggregateStats with system rights, as FatFractal did",
            ])
        let definition = try AppDefinition.parse(
            Array(result.definitionText.utf8),
            modules: ["scripts/WouldYaEventHandlers": "", "scripts/AggregateStats": ""])
        #expect(definition.scripts.handlers.map(\.name) == ["WouldYaCreate"])
        #expect(definition.scripts.extensions["Stats"]?.secured == true)
    }

    static func object(_ text: String) -> JSONObject {
        (try? JSONParser.parse(text))?.objectValue ?? JSONObject()
    }

    static let variants: [(String, FFDLImport.ScriptStatement)] = [
        (
            "CREATE HANDLER TopCelebUpdate  POST ON /TopCelebrity Update as javascript:var h = require ('scripts/TopCelebrityEventHandlers'); h.handleTopCelebrityUpdate (FF_EVENT_DATA_JSON);",
            .handler(
                name: "TopCelebUpdate",
                object(
                    #"{"collection":"TopCelebrity","events":["update"],"phase":"post","script":"scripts/TopCelebrityEventHandlers","function":"handleTopCelebrityUpdate","runAs":"system"}"#
                ))
        ),
        // FatFractal's samples usually call the function on require's result, often naming the file.
        (
            "CREATE HANDLER addToAdminGroup PRE ON /FFUser CREATE AS javascript:require('scripts/handlers.js').addToAdminGroup();",
            .handler(
                name: "addToAdminGroup",
                object(
                    #"{"collection":"FFUser","events":["create"],"phase":"pre","script":"scripts/handlers","function":"addToAdminGroup","runAs":"system"}"#
                ))
        ),
        // No timing: POST. Lower case, double quotes, several events, no last semicolon.
        (
            #"create handler audit on /Vote create,Update, DELETE as javascript: var x=require("scripts/lib/audit");x.log()"#,
            .handler(
                name: "audit",
                object(
                    #"{"collection":"Vote","events":["create","update","delete"],"phase":"post","script":"scripts/lib/audit","function":"log","runAs":"system"}"#
                ))
        ),
        (
            "CREATE HANDLER Later ASYNC ON /Vote Create Delete AS javascript:require ('scripts/Later').run (FF_EVENT_DATA_JSON)",
            .handler(
                name: "Later",
                object(
                    #"{"collection":"Vote","events":["create","delete"],"phase":"async","script":"scripts/Later","function":"run","runAs":"system"}"#
                ))
        ),
        // Anything else stays code, run as FatFractal ran it.
        (
            "CREATE HANDLER Log POST ON /Vote Delete AS javascript:print('deleted ' + FF_EVENT_DATA_JSON.guid);",
            .handler(
                name: "Log",
                object(
                    #"{"collection":"Vote","events":["delete"],"phase":"post","code":"print('deleted ' + FF_EVENT_DATA_JSON.guid);","runAs":"system"}"#
                ))
        ),
        (
            "CREATE EXTENSION /Odd AS javascript:var h = require('scripts/A'); g.f();",
            .extension(
                name: "Odd", object(#"{"code":"var h = require('scripts/A'); g.f();","runAs":"system"}"#))
        ),
        (
            "CREATE EXTENSION /Direct AS javascript:require('ffef/FatFractal').getActiveUser()",
            .extension(
                name: "Direct",
                object(#"{"code":"require('ffef/FatFractal').getActiveUser()","runAs":"system"}"#))
        ),
        (
            "CREATE EXTENSION /Arg AS javascript:require('scripts/A').f(42);",
            .extension(name: "Arg", object(#"{"code":"require('scripts/A').f(42);","runAs":"system"}"#))
        ),
        (
            "CREATE EXTENSION /resetPassword        UNSECURED AS javascript:require ('scripts/PasswordReset.js').resetPassword();",
            .extension(
                name: "resetPassword",
                object(
                    #"{"secured":false,"script":"scripts/PasswordReset","function":"resetPassword","runAs":"system"}"#
                ))
        ),
        (
            "create extension Plain as javascript:require('scripts/Plain').run()",
            .extension(
                name: "Plain", object(#"{"script":"scripts/Plain","function":"run","runAs":"system"}"#))
        ),
        (
            "CREATE HANDLER increase POST ON /Orders GRABBAG_ADD AS javascript:require('scripts/handlers').totalOrder();",
            .untranslatable(
                "Roost runs handlers on Create, Update and Delete; 'GRABBAG_ADD' has no equivalent")
        ),
        (
            "CREATE HANDLER Legacy POST ON /Vote Create AS server:com.example.Legacy",
            .untranslatable("Roost runs JavaScript; 'server' code has no equivalent")
        ),
        (
            "CREATE HANDLER NoCode POST ON /Vote Create",
            .untranslatable(
                "expects CREATE HANDLER name [PRE|POST|ASYNC] ON /Collection Create|Update|Delete AS javascript:…"
            )
        ),
        (
            "CREATE HANDLER H POST ON /Bad-Name Create AS javascript:1",
            .untranslatable("'/Bad-Name' is not a collection name Roost accepts")
        ),
        (
            "CREATE HANDLER Bad.Name POST ON /Vote Create AS javascript:1",
            .untranslatable("'Bad.Name' is not a handler name Roost accepts (1 to 64 letters, digits or '_')")
        ),
        (
            "CREATE EXTENSION /a/b AS javascript:1",
            .untranslatable("'/a/b' is not an extension name Roost accepts (1 to 64 letters, digits or '_')")
        ),
        (
            "CREATE EXTENSION /Empty AS javascript:",
            .untranslatable("the code is empty or longer than 64 KiB")
        ),
        (
            "CREATE EXTENSION /NoAs javascript:1",
            .untranslatable("expects CREATE EXTENSION /name [UNSECURED] AS javascript:…")
        ),
    ]

    @Test(
        "FatFractal's variants: timing, case, events, require forms, UNSECURED; what has no equivalent says why",
        arguments: variants)
    func variant(_ line: String, _ expected: FFDLImport.ScriptStatement) {
        #expect(FFDLImport.scriptStatement(line) == expected)
    }

    @Test("a statement continued with \\ is read whole; a name declared twice keeps the first")
    func continuationsAndDuplicates() {
        let result = FFDLImport(
            ffdl: """
                CREATE EXTENSION /Populate UNSECURED AS \\
                    javascript:require('scripts/extensions').populate()
                CREATE OBJECTTYPE FFUser \\
                  ( \\
                    userName STRING \\
                  )
                CREATE EXTENSION /Populate AS javascript:require('scripts/other').populate()
                """)
        #expect(
            result.lines.map { "\($0.number) \($0.outcome.rawValue): \($0.text)" } == [
                "1 translated: CREATE EXTENSION /Populate UNSECURED AS javascript:require('scripts/extensions').populate()",
                "3 not needed: CREATE OBJECTTYPE FFUser ( userName STRING )",
                "7 not translated: CREATE EXTENSION /Populate AS javascript:require('scripts/other').populate()",
            ])
        #expect(result.lines[2].reason == "'Populate' is declared on line 1 already")
        #expect(
            result.definition["extensions"]
                == .object(
                    Self.object(
                        #"{"Populate":{"secured":false,"script":"scripts/extensions","function":"populate","runAs":"system"}}"#
                    )))
    }

    /// FatFractal's layout: app/ff-config/application.ffdl beside app/ff-scripts.
    static func fatFractalApp() throws -> String {
        let app = TestServer.makeTemporaryDirectory()
        try ScriptFolderTests.write(
            app + "/ff-config/application.ffdl",
            "CREATE COLLECTION /WouldYa OBJECTTYPE WouldYa\n" + hoodyoodoo)
        try ScriptFolderTests.write(
            app + "/ff-scripts/WouldYaEventHandlers.js", "exports.handleWouldYaCreate = function () {};")
        try ScriptFolderTests.write(
            app + "/ff-scripts/AggregateStats.js", "exports.aggregateStats = function () {};")
        try ScriptFolderTests.write(app + "/ff-scripts/notes.txt", "not copied")
        return app
    }

    @Test("roost app import copies ff-scripts into the scripts folder next to the written roost.json")
    func importCopiesScripts() async throws {
        let app = try Self.fatFractalApp()
        let out = TestServer.makeTemporaryDirectory()
        let imported = try await runRoost([
            "app", "import", app + "/ff-config/application.ffdl", "--output", out + "/roost.json",
        ])
        #expect(imported.status == 0, "\(imported.errorOutput)")
        #expect(imported.errorOutput == "")
        #expect(
            imported.output == """
                roost: wrote \(out)/roost.json from 3 of 3 lines
                roost: copied 2 script files from \(app)/ff-scripts into \(out)/scripts
                roost: \(out)/roost.json is valid; run it with 'roost serve --app \(out)/roost.json'

                """)
        #expect(
            try String(contentsOfFile: out + "/scripts/WouldYaEventHandlers.js", encoding: .utf8)
                == "exports.handleWouldYaCreate = function () {};")
        #expect(!FileManager.default.fileExists(atPath: out + "/scripts/notes.txt"))
        let definition = try AppDefinitionSource.load(out + "/roost.json")
        #expect(definition.scripts.handlers.first?.entry.module == "scripts/WouldYaEventHandlers")
        #expect(definition.scripts.modules.count == 2)

        // A second import beside the first would overwrite its scripts: nothing is written.
        let again = try await runRoost([
            "app", "import", app + "/ff-config/application.ffdl", "--output", out + "/second.json",
        ])
        #expect(again.status == 73)
        #expect(
            again.errorOutput
                == "roost: \(out)/scripts/AggregateStats.js exists; choose another --output or remove it first\n"
        )
        #expect(!FileManager.default.fileExists(atPath: out + "/second.json"))

        // Without --output the definition goes to standard output and the scripts stay where they are.
        let printed = try await runRoost(["app", "import", app + "/ff-config/application.ffdl"])
        #expect(printed.status == 0)
        #expect(printed.output.contains(#""WouldYaCreate": {"#))
        #expect(
            printed.errorOutput
                == "roost: note: the 2 script files of \(app)/ff-scripts are copied only with --output roost.json, into the scripts folder next to it\n"
        )
    }

    @Test("an import whose handler names a script file that is missing says what roost app check will refuse")
    func importWithoutTheScript() async throws {
        let app = try Self.fatFractalApp()
        try FileManager.default.removeItem(atPath: app + "/ff-scripts/AggregateStats.js")
        let out = TestServer.makeTemporaryDirectory()
        let imported = try await runRoost([
            "app", "import", app + "/ff-config/application.ffdl", "--output", out + "/roost.json",
        ])
        #expect(imported.status == 0)
        #expect(
            imported.errorOutput
                == "roost: note: 'roost app check \(out)/roost.json' refuses it as written: extensions.Stats.script: no file scripts/AggregateStats.js: put it in the scripts folder next to roost.json\n"
        )
    }
}
