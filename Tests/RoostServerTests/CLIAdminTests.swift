import Foundation
import RoostStore
import RoostTestSupport
import Testing

/// The operator's commands against the real binary: exact exit statuses and messages.
@Suite("Admin commands")
struct CLIAdminTests {
    /// Every admin command that takes --data-dir, with the arguments it needs.
    static let dataFolderCommands: [[String]] = [
        ["users", "list"], ["users", "list", "--json"], ["users", "create", "ada"],
        ["users", "promote", "ada"],
        ["users", "demote", "ada"], ["users", "reset-password", "ada"], ["users", "delete", "ada"],
        ["index", "list"], ["index", "create", "Post", "gender"],
        ["index", "create", "Post", "gender", "--force"],
        ["index", "drop", "Post", "gender"], ["blobs", "gc"], ["blobs", "gc", "--min-age", "0"],
    ]

    @Test(
        "an admin command refuses a folder with no Roost database and creates nothing (exit 66)",
        arguments: dataFolderCommands)
    func refusesFolderWithoutDatabase(_ command: [String]) async throws {
        let empty = TestServer.makeTemporaryDirectory()
        let result = try await runRoost(command + ["--data-dir", empty], input: "a long password\n")
        #expect(result.status == 66)
        #expect(
            result.errorOutput
                == "roost: there is no Roost database in \(empty) (no roost.sqlite); nothing was created. "
                + "Pass the folder the server uses with --data-dir (or ROOST_DATA_DIR), "
                + "or start 'roost serve --data-dir \(empty)' once to create it.\n")
        #expect(result.output == "")
        #expect(try FileManager.default.contentsOfDirectory(atPath: empty) == [])

        let missing = empty + "/typo"
        let typo = try await runRoost(command + ["--data-dir", missing], input: "a long password\n")
        #expect(typo.status == 66)
        #expect(
            typo.errorOutput
                == "roost: there is no data folder at \(missing); nothing was created. "
                + "Pass the folder the server uses with --data-dir (or ROOST_DATA_DIR), "
                + "or start 'roost serve --data-dir \(missing)' once to create it.\n")
        #expect(!FileManager.default.fileExists(atPath: missing))
    }

    /// A coverage build's binary writes its counts where nobody may not; run as nobody, it counts
    /// nothing instead of adding a line to the error output these tests compare.
    static let noProfile = "LLVM_PROFILE_FILE=/dev/null"

    @Test(
        "a data folder the user may not read is said to be unreadable, not missing (exit 77)",
        .enabled(
            if: getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv"),
            "needs root and setpriv to run the command as nobody"),
        .enabled(if: TestBackend.isSQLite, "the data folder's database is SQLite's"))
    func unreadableFolder() async throws {
        let directory = try await makeDataFolder()
        // The database is owner-only (root's here): the user nobody cannot read it.
        let result = try await runProgram(
            "/usr/bin/setpriv",
            [
                "--reuid=nobody", "--regid=nogroup", "--clear-groups", "/usr/bin/env", Self.noProfile,
                try RoostProcess.binaryPath(), "users",
                "list",
                "--data-dir", directory,
            ])
        #expect(result.status == 77)
        #expect(
            result.errorOutput
                == "roost: cannot read \(directory)/roost.sqlite: permission denied. Run the command as the user the server runs as (e.g. sudo -u roost roost …), which owns the data folder.\n"
        )
    }

    @Test(
        "roost serve says why it cannot listen: a port in use, a privileged port",
        .enabled(
            if: getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv"),
            "needs root and setpriv to run the server as nobody"),
        .enabled(if: TestBackend.isSQLite, "nobody cannot reach the test PostgreSQL cluster"))
    func listenFailuresSayWhy() async throws {
        let running = try RoostProcess(dataDirectory: try await makeDataFolder())
        let busy = try await runRoost([
            "serve", "--port", String(running.port), "--data-dir", try await makeDataFolder(),
        ])
        #expect(busy.status == 1)
        #expect(
            busy.errorOutput.hasSuffix(
                "cannot listen on 127.0.0.1:\(running.port): Address already in use; is another server using that port?\n"
            ),
            "\(busy.errorOutput)")
        #expect(try await running.stop(signal: SIGTERM) == 0)

        let folder = TestServer.makeTemporaryDirectory()
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        chmod(folder, 0o777)
        let privileged = try await runProgram(
            "/usr/bin/setpriv",
            [
                "--reuid=nobody", "--regid=nogroup", "--clear-groups", "/usr/bin/env", Self.noProfile,
                try RoostProcess.binaryPath(), "serve",
                "--port",
                "80", "--data-dir", folder + "/data",
            ])
        #expect(privileged.status == 1)
        #expect(
            privileged.errorOutput.hasSuffix(
                "cannot listen on 127.0.0.1:80: Permission denied; ports below 1024 need root or CAP_NET_BIND_SERVICE (see deploy/roost.service), or use a port from 1024 up behind a proxy\n"
            ),
            "\(privileged.errorOutput)")
    }

    @Test("users list prints every user as a table, or as JSON with --json")
    func listUsers() async throws {
        let directory = TestServer.makeTemporaryDirectory()
        let server = try RoostProcess(dataDirectory: directory)
        let client = TestHTTPClient(port: server.port)
        #expect(try await runRoost(["users", "list", "--data-dir", directory]).output == "no users\n")
        #expect(try await runRoost(["users", "list", "--json", "--data-dir", directory]).output == "[]\n")

        let root = try await createUser("root", admin: true, email: "root@example.com", in: directory)
        let bob = try await createUser("bob", in: directory)
        // An administrator deactivates bob over HTTP; the list shows it.
        let token = try await client.login("root", password: "root password 1")
        let patched = try await client.send(
            "PATCH", "/ff/resources/FFUser/\(bob)", json: #"{"active":false}"#, headers: [("X-Token", token)])
        #expect(patched.status == 200, "\(patched.text)")

        let table = try await runRoost(["users", "list", "--data-dir", directory])
        #expect(table.status == 0)
        #expect(
            table.output == """
                NAME  EMAIL             GUID                        ADMIN  ACTIVE
                root  root@example.com  \(root)  yes    yes
                bob   -                 \(bob)  no     no

                """)
        let json = try await runRoost(["users", "list", "--json", "--data-dir", directory])
        #expect(json.status == 0)
        #expect(
            json.output
                == #"[{"userName":"root","email":"root@example.com","guid":"\#(root)","admin":true,"active":true},"#
                + #"{"userName":"bob","email":null,"guid":"\#(bob)","admin":false,"active":false}]"# + "\n")
        try await server.stop(signal: SIGTERM)
    }

    @Test("users list reads every page: 1,001 users, in the order they were made")
    func listUsersPastOnePage() async throws {
        let directory = try await makeDataFolder()
        // FFUser objects straight into the store: hashing 1,001 passwords would take minutes.
        let storage = try await TestBackend.openStorage(for: directory)
        for number in 0...1000 {
            let guid = String(format: "u%04d", number)
            let document = #"{"guid":"\#(guid)","userName":"user\#(number)","active":true}"#
            try await storage.objectStore.insert(
                StoredObject(
                    collection: "FFUser", guid: guid, document: Array(document.utf8), createdBy: guid,
                    createdAt: Int64(number), updatedBy: guid, updatedAt: Int64(number), version: 1))
        }
        let listed = try await runRoost(["users", "list", "--json", "--data-dir", directory])
        #expect(listed.status == 0, "\(listed.errorOutput)")
        let users = try #require(
            try JSONSerialization.jsonObject(with: Data(listed.output.utf8)) as? [[String: Any]])
        #expect(users.count == 1001)
        #expect(users.map { $0["userName"] as? String } == (0...1000).map { "user\($0)" })
    }

    @Test("promote and demote change what a live session may do, at its next request")
    func promoteAndDemote() async throws {
        let directory = TestServer.makeTemporaryDirectory()
        let server = try RoostProcess(dataDirectory: directory)
        let client = TestHTTPClient(port: server.port)
        let bob = try await createUser("bob", in: directory)
        let token = try await client.login("bob", password: "bob password 1")
        let adminOnly = "/ff/admin/sessions?user=\(bob)"
        let refused = try await client.send("GET", adminOnly, headers: [("X-Token", token)])
        #expect(refused.status == 403)
        #expect(refused.json["code"] as? String == "admin_required")

        let promoted = try await runRoost(["users", "promote", "BOB", "--data-dir", directory])
        #expect(promoted.status == 0, "\(promoted.errorOutput)")
        #expect(promoted.output == "'BOB' is now an administrator (guid \(bob))\n")
        #expect(try await client.send("GET", adminOnly, headers: [("X-Token", token)]).status == 200)
        let user = try await client.send("GET", "/ff/resources/FFUser/\(bob)", headers: [("X-Token", token)])
        #expect(user.json["admin"] as? Bool == true)
        #expect(user.json["version"] as? Int == 2)
        #expect(user.json["updatedBy"] is NSNull)
        let again = try await runRoost(["users", "promote", "bob", "--data-dir", directory])
        #expect(again.status == 0)
        #expect(again.output == "'bob' is already an administrator (guid \(bob)); nothing changed\n")

        let demoted = try await runRoost(["users", "demote", "bob", "--data-dir", directory])
        #expect(demoted.status == 0)
        #expect(demoted.output == "'bob' is no longer an administrator (guid \(bob))\n")
        #expect(try await client.send("GET", adminOnly, headers: [("X-Token", token)]).status == 403)
        let notAdmin = try await runRoost(["users", "demote", "bob", "--data-dir", directory])
        #expect(notAdmin.output == "'bob' is not an administrator (guid \(bob)); nothing changed\n")

        let nobody = try await runRoost(["users", "promote", "nobody", "--data-dir", directory])
        #expect(nobody.status == 67)
        #expect(nobody.errorOutput == "roost: There is no user 'nobody'.\n")
        try await server.stop(signal: SIGTERM)
    }

    @Test(
        "users mistakes exit 64",
        arguments: [
            (["users", "list", "bob"], "'roost users list' takes no user name"),
            (["users", "promote"], "'roost users promote' takes one user name"),
            (["users", "demote", "a", "b"], "'roost users demote' takes one user name"),
            (["users", "promote", "bob", "--json"], "--json is for 'roost users list' and 'identities'"),
            (["users", "elevate", "bob"], "unknown users command 'elevate'"),
        ])
    func usersUsageErrors(_ arguments: [String], _ message: String) async throws {
        let result = try await runRoost(arguments + ["--data-dir", TestServer.makeTemporaryDirectory()])
        #expect(result.status == 64)
        #expect(result.errorOutput.hasPrefix("roost: \(message)\n"), "\(result.errorOutput)")
    }

    @Test("roost help COMMAND prints exactly what roost COMMAND --help prints, for every command")
    func helpForEveryCommand() async throws {
        let main = try await runRoost(["help"])
        #expect(main.status == 0)
        #expect(main.output == (try await runRoost(["--help"])).output)
        // The commands as the main help lists them, so a new command cannot miss its help.
        let listing = try #require(main.output.components(separatedBy: "COMMANDS:\n").last)
        let commands = listing.components(separatedBy: "\n\n")[0].split(separator: "\n").map {
            String($0.split(separator: " ")[0])
        }
        #expect(commands.contains("users") && commands.contains("version") && commands.contains("help"))
        for command in commands {
            let viaHelp = try await runRoost(["help", command])
            let viaFlag = try await runRoost([command, "--help"])
            #expect(viaHelp.status == 0, "roost help \(command)")
            #expect(viaFlag.status == 0, "roost \(command) --help")
            #expect(viaHelp.output == viaFlag.output, "roost help \(command)")
            #expect(viaHelp.output.contains("USAGE:\n  roost \(command)"), "roost help \(command)")
        }
        let unknown = try await runRoost(["help", "frobnicate"])
        #expect(unknown.status == 64)
        #expect(
            unknown.errorOutput
                == "roost: unknown command 'frobnicate'\nRun 'roost --help' for the commands.\n")
    }

    @Test("index create refuses a collection with no objects that no definition declares, unless --force")
    func indexCreateUnknownCollection() async throws {
        let directory = TestServer.makeTemporaryDirectory()
        let server = try RoostProcess(
            dataDirectory: directory, arguments: ["--app", try writeOpenDefinition(beside: directory)])
        let created = try await TestHTTPClient(port: server.port).send(
            "POST", "/ff/resources/Celebrity", json: #"{"name":"Ada"}"#)
        #expect(created.status == 201)
        try await server.stop(signal: SIGTERM)

        let typo = try await runRoost(["index", "create", "Celebrty", "name", "--data-dir", directory])
        #expect(typo.status == 67)
        #expect(
            typo.errorOutput
                == "roost: there is no collection 'Celebrty': it holds no objects and is not declared "
                + "(--app FILE checks the server's app definition). Collections with objects: Celebrity. "
                + "Check the name, or pass --force to index it before its first object.\n")
        #expect(
            try await runRoost(["index", "list", "--data-dir", directory]).output == "no field indexes\n")

        let definition = directory + "-declared.json"
        try Data(#"{"collections":{"Post":{}}}"#.utf8).write(to: URL(fileURLWithPath: definition))
        let undeclared = try await runRoost([
            "index", "create", "Posts", "title", "--app", definition, "--data-dir", directory,
        ])
        #expect(undeclared.status == 67)
        #expect(
            undeclared.errorOutput
                == "roost: there is no collection 'Posts': it holds no objects and \(definition) does not "
                + "declare it. Collections with objects: Celebrity. "
                + "Check the name, or pass --force to index it before its first object.\n")

        let unreadable = directory + "-missing.json"
        let badDefinition = try await runRoost([
            "index", "create", "Post", "title", "--app", unreadable, "--data-dir", directory,
        ])
        #expect(badDefinition.status == 65)
        #expect(
            badDefinition.errorOutput
                == "roost: \(unreadable): cannot read '\(unreadable)'; check that the file exists and is readable\n"
        )
        let noValue = try await runRoost([
            "index", "create", "Post", "title", "--app", "--data-dir", directory,
        ])
        #expect(noValue.status == 64)
        #expect(noValue.errorOutput.hasPrefix("roost: --app needs a value (FILE)\n"))

        for arguments in [
            ["Celebrity", "name"], ["Post", "title", "--app", definition], ["Celebrty", "name", "--force"],
            ["FFUser", "email"],
        ] {
            let result = try await runRoost(["index", "create"] + arguments + ["--data-dir", directory])
            #expect(result.status == 0, "\(arguments): \(result.errorOutput)")
        }
        #expect(
            try await runRoost(["index", "list", "--data-dir", directory]).output
                == "Celebrity\tname\nCelebrty\tname\nFFUser\temail\nPost\ttitle\n")
    }

    @Test("version prints the version and the commit the binary was built from")
    func version() async throws {
        let result = try await runRoost(["version"])
        #expect(result.status == 0)
        // A test build is a plain 'swift build': scripts/install.sh stamps the commit.
        #expect(
            result.output.wholeMatch(
                of: #/roost \d+\.\d+\.\d+ \(commit ([0-9a-f]{7,40}(-dirty)?|unknown)\)\n/#)
                != nil, "\(result.output)")
        #expect(try await runRoost(["--version"]).output == result.output)
    }

    /// Creates a user with `roost users create` beside a running server; returns its guid.
    private func createUser(_ name: String, admin: Bool = false, email: String? = nil, in directory: String)
        async throws -> String
    {
        let arguments =
            ["users", "create", name, "--data-dir", directory] + (admin ? ["--admin"] : [])
            + (email.map { ["--email", $0] } ?? [])
        let result = try await runRoost(arguments, input: "\(name) password 1\n")
        guard result.status == 0,
            let range = result.output.range(of: #"guid [a-z0-9]+"#, options: .regularExpression)
        else { throw TestClientError(description: result.errorOutput) }
        return String(result.output[range].dropFirst(5))
    }
}

/// A data folder holding a Roost database with nothing in it, made by the real `roost serve`.
func makeDataFolder() async throws -> String {
    let directory = TestServer.makeTemporaryDirectory()
    if TestBackend.current == .postgres { _ = try await TestBackend.databaseURL(for: directory) }
    let server = try RoostProcess(dataDirectory: directory)
    guard try await server.stop(signal: SIGTERM) == 0 else {
        throw TestClientError(description: "roost serve did not stop cleanly on \(directory)")
    }
    return directory
}
