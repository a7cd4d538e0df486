import Foundation
import RoostCore
import RoostPostgres
import RoostServer
import RoostTestSupport
import Testing

/// A definition stored in the shared database carries its script files, so every instance runs
/// the same scripts (issue 19).
@Suite("Shared definitions with scripts")
struct SharedScriptDefinitionTests {
    static let definition =
        #"{"extensions":{"Stats":{"script":"scripts/Stats","function":"run"}}}"#

    @Test(
        "roost app apply --database brings the scripts folder to every instance; an old stored text still reads"
    )
    func scriptsTravelWithTheDefinition() async throws {
        let (a, b, url) = try await SharedDatabaseTests.pair()
        let folder = TestServer.makeTemporaryDirectory()
        try Data(Self.definition.utf8).write(to: URL(fileURLWithPath: folder + "/roost.json"))
        try FileManager.default.createDirectory(
            atPath: folder + "/scripts/lib", withIntermediateDirectories: true)
        try Data("exports.run = function () { return 1; };".utf8).write(
            to: URL(fileURLWithPath: folder + "/scripts/Stats.js"))
        try Data("exports.x = 2;".utf8).write(to: URL(fileURLWithPath: folder + "/scripts/lib/util.js"))
        let expected = [
            "scripts/Stats": "exports.run = function () { return 1; };", "scripts/lib/util": "exports.x = 2;",
        ]

        let applied = try await runRoost(["app", "apply", folder + "/roost.json", "--database", url])
        #expect(applied.status == 0, "\(applied.errorOutput)")
        for server in [a, b] {
            let arrived = await eventually(within: 10) {
                server.application.definitions.definition.scripts.modules == expected
            }
            #expect(arrived, "the instance on port \(server.port) has the scripts")
            #expect(server.application.definitions.definition.scripts.extensions["Stats"] != nil)
        }
        // Applying the same files again keeps the revision: the bundle is written the same way.
        let again = try await runRoost(["app", "apply", folder + "/roost.json", "--database", url])
        #expect(again.output.contains("revision 1"), "\(again.output)")
        // A definition whose handler lacks its script file is refused before it is stored.
        try FileManager.default.removeItem(atPath: folder + "/scripts/Stats.js")
        let refused = try await runRoost(["app", "apply", folder + "/roost.json", "--database", url])
        #expect(refused.status == 65)
        #expect(refused.errorOutput.contains("extensions.Stats.script: no file scripts/Stats.js"))

        // A row an instance stored before definitions carried scripts: the bare roost.json text.
        let storage = try PostgresStorage(
            configuration: try PostgresConfiguration(connectionString: url), collections: .builtIn,
            listening: false)
        let old = #"{"collections":{"Note":{"rules":{"create":"none"}}}}"#
        #expect(try await storage.definitions.storeDefinition(Array(old.utf8), at: 1) == 2)
        await storage.close()
        let c = try await TestServer { configuration in configuration.databaseURL = url }
        #expect(c.application.definitions.definition.collections["Note"] != nil)
        #expect(c.application.definitions.definition.scripts == ScriptSettings())
        let followed = await eventually(within: 10) {
            a.application.definitions.definition.collections["Note"] != nil
        }
        #expect(followed)
        #expect(a.application.definitions.definition.scripts.modules.isEmpty)
        for server in [a, b, c] { await server.stop() }
    }
}
