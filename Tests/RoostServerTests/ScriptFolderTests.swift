import Foundation
import RoostCore
import RoostTestSupport
import Testing

/// The `scripts` folder next to roost.json: what is read, the limits, and reloads.
@Suite("The scripts folder")
struct ScriptFolderTests {
    /// A folder with a roost.json (whose handler runs scripts/Votes.js) and a scripts folder.
    static func app(_ files: [String: String] = [:]) throws -> String {
        let folder = TestServer.makeTemporaryDirectory()
        try write(
            folder + "/roost.json",
            #"{"handlers":{"VoteCreate":{"collection":"Vote","events":["create"],"phase":"post","script":"scripts/Votes","function":"onCreate"}}}"#
        )
        try write(folder + "/scripts/Votes.js", "exports.onCreate = function () {};")
        for (path, text) in files { try write(folder + "/" + path, text) }
        return folder
    }

    static func write(_ path: String, _ text: String) throws {
        try write(path, Data(text.utf8))
    }

    static func write(_ path: String, _ data: Data) throws {
        let folder = URL(fileURLWithPath: path).deletingLastPathComponent().path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try data.write(to: URL(fileURLWithPath: path))
    }

    static func refusal(_ folder: String) -> String? {
        do {
            _ = try AppDefinitionSource.load(folder + "/roost.json")
            return nil
        } catch {
            return error.description
        }
    }

    @Test(
        "every .js file up to 4 folders deep is a module; dotfiles, other files and a byte order mark are left out"
    )
    func readsModules() throws {
        let folder = try Self.app([
            "scripts/lib/util.js": "exports.x = 1;",
            "scripts/a/b/c/d/deep.js": "exports.deep = true;",
            "scripts/.hidden.js": "secret",
            "scripts/.git/objects.js": "secret",
            "scripts/README.md": "not a script",
            "scripts/Marked-v1.2.js": "\u{FEFF}exports.marked = 1;",
        ])
        try FileManager.default.createSymbolicLink(
            atPath: folder + "/scripts/Alias.js", withDestinationPath: "Votes.js")
        let definition = try AppDefinitionSource.load(folder + "/roost.json")
        #expect(
            definition.scripts.modules == [
                "scripts/Votes": "exports.onCreate = function () {};",
                "scripts/Alias": "exports.onCreate = function () {};",
                "scripts/lib/util": "exports.x = 1;",
                "scripts/a/b/c/d/deep": "exports.deep = true;",
                "scripts/Marked-v1.2": "exports.marked = 1;",
            ])
        #expect(
            definition.scripts.handlers.first?.entry
                == ScriptEntry(module: "scripts/Votes", function: "onCreate"))
    }

    @Test("a definition without a scripts folder has no modules, and a handler's module must exist")
    func missingModule() throws {
        let folder = try Self.app()
        try FileManager.default.removeItem(atPath: folder + "/scripts")
        #expect(
            Self.refusal(folder)
                == "handlers.VoteCreate.script: no file scripts/Votes.js: put it in the scripts folder next to roost.json"
        )
        try Self.write(folder + "/roost.json", "{}")
        #expect(try AppDefinitionSource.load(folder + "/roost.json").scripts.modules.isEmpty)
    }

    @Test("what is refused names the file")
    func refusals() throws {
        let outside = TestServer.makeTemporaryDirectory() + "/secret.js"
        try Self.write(outside, "secret")
        var folder = try Self.app()
        try FileManager.default.createSymbolicLink(
            atPath: folder + "/scripts/Evil.js", withDestinationPath: outside)
        #expect(
            Self.refusal(folder) == "scripts/Evil.js: a symbolic link that leads out of the scripts folder")

        folder = try Self.app()
        try FileManager.default.createSymbolicLink(atPath: folder + "/scripts/up", withDestinationPath: "..")
        #expect(Self.refusal(folder) == "scripts/up: a symbolic link that leads out of the scripts folder")

        folder = try Self.app(["scripts/a/b/c/d/e/deep.js": ""])
        #expect(Self.refusal(folder) == "scripts/a/b/c/d/e: folders nest more than 4 deep inside scripts/")

        folder = try Self.app(["scripts/my votes.js": ""])
        #expect(
            Self.refusal(folder)
                == "scripts/my votes.js: file and folder names in scripts/ are letters, digits, '_', '-' and '.', up to 128 of them, not starting with '.'"
        )

        folder = try Self.app()
        try Self.write(folder + "/scripts/Latin1.js", Data([0x76, 0x61, 0x72, 0x20, 0xE9, 0x3B]))
        #expect(Self.refusal(folder) == "scripts/Latin1.js: not UTF-8 text")

        folder = try Self.app()
        #expect(mkfifo(folder + "/scripts/pipe.js", 0o600) == 0)
        #expect(Self.refusal(folder) == "scripts/pipe.js: not a regular file")

        folder = try Self.app()
        try FileManager.default.removeItem(atPath: folder + "/scripts")
        try Self.write(folder + "/scripts", "not a folder")
        #expect(
            Self.refusal(folder)
                == "scripts: not a folder; the app's script files go in a folder named scripts")
    }

    @Test("at most 500 files, 1 MiB each and 8 MiB in all")
    func limits() throws {
        var folder = try Self.app()
        for index in 1..<500 { try Self.write(folder + "/scripts/m\(index).js", "") }
        #expect(try AppDefinitionSource.load(folder + "/roost.json").scripts.modules.count == 500)
        try Self.write(folder + "/scripts/one-more.js", "")
        #expect(Self.refusal(folder) == "scripts: more than 500 script files")

        let mebibyte = String(repeating: "x", count: 1 << 20)
        folder = try Self.app(["scripts/Exactly.js": mebibyte])
        #expect(
            try AppDefinitionSource.load(folder + "/roost.json").scripts.modules["scripts/Exactly"]
                == mebibyte)
        folder = try Self.app(["scripts/Big.js": mebibyte + "x"])
        #expect(
            Self.refusal(folder) == "scripts/Big.js: larger than 1 MiB, the most one script file may hold")

        // Files are read in name order: Votes.js, then f0…f7, of 1 MiB each; f7 goes over.
        folder = try Self.app(
            Dictionary(uniqueKeysWithValues: (0..<8).map { ("scripts/f\($0).js", mebibyte) }))
        #expect(Self.refusal(folder) == "scripts/f7.js: the script files add up to more than 8 MiB")
    }

    @Test(
        "a reload with a bad script file keeps the running definition and scripts; a good one replaces them")
    func reload() async throws {
        let folder = try Self.app()
        let server = try await TestServer { $0.appDefinitionPath = folder + "/roost.json" }
        let modules = { server.application.definitions.definition.scripts.modules }
        #expect(modules() == ["scripts/Votes": "exports.onCreate = function () {};"])

        try Self.write(folder + "/scripts/Votes.js", "exports.onCreate = function () { return 2; };")
        try Self.write(folder + "/scripts/Bad.js", Data([0xFF, 0xFE]))
        await #expect(throws: AppDefinitionError.self) { try await server.application.reloadAppDefinition() }
        #expect(modules() == ["scripts/Votes": "exports.onCreate = function () {};"])

        try FileManager.default.removeItem(atPath: folder + "/scripts/Votes.js")
        try FileManager.default.removeItem(atPath: folder + "/scripts/Bad.js")
        do {
            try await server.application.reloadAppDefinition()
            Issue.record("a handler without its module was put in force")
        } catch {
            #expect("\(error)".hasPrefix("handlers.VoteCreate.script: no file scripts/Votes.js"))
        }
        #expect(modules() == ["scripts/Votes": "exports.onCreate = function () {};"])

        try Self.write(folder + "/scripts/Votes.js", "exports.onCreate = function () { return 3; };")
        try await server.application.reloadAppDefinition()
        #expect(modules() == ["scripts/Votes": "exports.onCreate = function () { return 3; };"])
        await server.stop()
    }

    @Test(
        "SIGHUP with a bad script file keeps the running definition; roost app apply puts the fixed one in force"
    )
    func reloadOfARunningServer() async throws {
        let folder = try Self.app()
        let data = TestServer.makeTemporaryDirectory()
        let server = try RoostProcess(dataDirectory: data, arguments: ["--app", folder + "/roost.json"])
        let client = TestHTTPClient(port: server.port)
        let status = data + "/roost.reload-status"
        try Self.write(folder + "/scripts/lib/Bad.js", Data([0x61, 0xFF]))
        server.process.signal(SIGHUP)
        let reported = await eventually {
            (try? String(contentsOfFile: status, encoding: .utf8)).map { $0.hasSuffix("\n") } ?? false
        }
        #expect(reported)
        #expect(
            try String(contentsOfFile: status, encoding: .utf8)
                == "error: scripts/lib/Bad.js: not UTF-8 text\n")
        #expect(try await client.send("GET", "/health").status == 200)

        let refused = try await runRoost(["app", "apply", folder + "/roost.json", "--data-dir", data])
        #expect(refused.status == 65)
        #expect(refused.errorOutput == "roost: \(folder)/roost.json: scripts/lib/Bad.js: not UTF-8 text\n")
        try FileManager.default.removeItem(atPath: folder + "/scripts/lib/Bad.js")
        let applied = try await runRoost(["app", "apply", folder + "/roost.json", "--data-dir", data])
        #expect(applied.status == 0, "\(applied.errorOutput)")
        #expect(try String(contentsOfFile: status, encoding: .utf8) == "ok\n")
        _ = try await server.stop(signal: SIGTERM)
    }

    @Test("roost app check counts handlers, extensions and script files, and names a bad file")
    func check() async throws {
        let folder = try Self.app(["scripts/lib/util.js": ""])
        let checked = try await runRoost(["app", "check", folder + "/roost.json"])
        #expect(checked.status == 0, "\(checked.errorOutput)")
        #expect(
            checked.output
                == "\(folder)/roost.json is valid: 0 collections, 1 handler, 2 script files declared\n")

        try Self.write(folder + "/scripts/lib/util.js", Data([0xC3]))
        let refused = try await runRoost(["app", "check", folder + "/roost.json"])
        #expect(refused.status == 65)
        #expect(refused.errorOutput == "roost: \(folder)/roost.json: scripts/lib/util.js: not UTF-8 text\n")
    }
}
