import Foundation
import RoostCore
import RoostTestSupport
import Testing

/// Issue 19: `roost script run FILE`, a script tried against a data folder (or the PostgreSQL
/// database of the tests' backend) with the same ff API and rules as the server's.
@Suite("roost script run") struct ScriptCommandTests {
    @Test(
        "runs a file with the app's modules, as anonymous or system, and prints its value; a failure exits 1")
    func runsAgainstADataFolder() async throws {
        let directory = TestServer.makeTemporaryDirectory()
        let server = try await TestServer(dataDirectory: directory) { $0.appDefinition = openRules }
        let created = try await server.client.send(
            "POST", "/ff/resources/Note", json: #"{"guid":"n1","title":"first"}"#)
        #expect(created.status == 201)
        await server.stop()
        let folder = directory + "-app"
        try FileManager.default.createDirectory(
            atPath: folder + "/scripts", withIntermediateDirectories: true)
        try Data(#"{"collections":{"Note":{"rules":{"update":"none"}}}}"#.utf8)
            .write(to: URL(fileURLWithPath: folder + "/roost.json"))
        try Data("exports.shout = function (text) { return text.toUpperCase(); };".utf8)
            .write(to: URL(fileURLWithPath: folder + "/scripts/Words.js"))
        let file = folder + "/try.js"
        try Data(
            """
            var ff = require('ffef/FatFractal');
            var words = require('scripts/Words');
            var note = ff.getObjFromUrl('/ff/resources/Note/n1');
            print('read', note.title);
            note.title = words.shout(note.title + ' ' + ff.getEventHandlerData().suffix);
            ff.updateObj(note).title;
            """.utf8
        ).write(to: URL(fileURLWithPath: file))
        let arguments = [
            "script", "run", file, "--app", folder + "/roost.json", "--data-dir", directory, "--data",
            #"{"suffix":"again"}"#,
        ]
        // Anonymous: the definition says nobody updates a Note.
        let refused = try await runRoost(arguments)
        #expect(refused.status == 1, "\(refused.errorOutput)")
        #expect(refused.errorOutput.contains("read first"))
        #expect(refused.errorOutput.contains("try.js"))
        let done = try await runRoost(arguments + ["--system"])
        #expect(done.status == 0, "\(done.errorOutput)")
        #expect(done.output == #"{"value":"FIRST AGAIN"}"# + "\n")
        let missing = try await runRoost(["script", "run", folder + "/nothing.js", "--data-dir", directory])
        #expect(missing.status == 64)
        #expect(missing.errorOutput.contains("cannot read"))
    }
}
