import Foundation
import RoostCore
import RoostServer

let appHelp = """
    Check or apply an app definition (roost.json): access rules, owner-only fields, indexes and
    settings.

    USAGE:
      roost app check FILE
      roost app apply FILE [--data-dir PATH]
      roost app apply FILE --database URL
      roost app import application.ffdl [--output roost.json]

    check   validates FILE and prints the first problem with its line or field.
    apply   validates FILE, installs it as the definition of the server running on the data
            folder (which must have been started with --app), and has the server reload it
            without dropping a connection. An invalid file is refused and the running
            definition stays.

    import  translates a FatFractal app definition into a Roost one (standard output, or the
            --output file, which must not exist yet) and lists on standard error every line it
            could not translate, and why.

    With --database (or ROOST_DATABASE_URL), apply stores FILE in the PostgreSQL database that
    servers share instead: every instance on it puts the definition in force within a second,
    with no signal and no restart.

    A running server also reloads its --app file on SIGHUP:  kill -HUP $(head -1 DATA/roost.pid)

    EXAMPLE:
      roost app check roost.json
      roost app apply roost.json --data-dir /var/lib/roost
    """

/// The files a running server keeps in its data folder so that `roost app apply` can find it.
enum ServerFiles {
    /// Line 1: the process id; line 2: the app definition path (empty without one).
    static func pidFile(_ dataDirectory: String) -> String { dataDirectory + "/roost.pid" }
    /// What the last reload did: `ok` or `error: <message>`.
    static func reloadStatus(_ dataDirectory: String) -> String { dataDirectory + "/roost.reload-status" }
}

/// Reloads the TLS certificate and the app definition on SIGHUP, and records the definition's
/// outcome for `roost app apply`.
func reloadOnHangup(_ application: Application, dataDirectory: String) {
    signal(SIGHUP, SIG_IGN)
    let source = DispatchSource.makeSignalSource(signal: SIGHUP, queue: DispatchQueue(label: "roost-hangup"))
    source.setEventHandler {
        reloadTLS(application)
        Task {
            let status: String
            do {
                try await application.reloadAppDefinition()
                status = "ok"
                application.logger.info(
                    "app definition reloaded from \(application.definitions.path ?? "(none)")")
            } catch {
                status = "error: \(error)"
                application.logger.error(
                    "app definition not reloaded; the running one stays in force. \(error)")
            }
            _ = FileManager.default.createFile(
                atPath: ServerFiles.reloadStatus(dataDirectory), contents: Data((status + "\n").utf8),
                attributes: [.posixPermissions: 0o600])
        }
    }
    source.resume()
    SignalSources.keep([source])
}

/// New connections get the new certificate; a file that cannot be used leaves the running one.
private func reloadTLS(_ application: Application) {
    do {
        if try application.reloadTLS() {
            say("roost: TLS certificate reloaded from \(application.configuration.tlsCertificatePath ?? "")")
        }
    } catch {
        printError("TLS certificate not reloaded; the running one stays in force: \(error)")
    }
}

/// `roost app ...`: returns the exit status.
func app(_ arguments: [String]) async -> Int32 {
    guard let action = arguments.first, !["-h", "--help", "help"].contains(action) else {
        print(appHelp)
        return 0
    }
    if action == "import" { return importFFDL(Array(arguments.dropFirst())) }
    guard let (database, files) = databaseAndNames(arguments.dropFirst(), command: "app") else {
        return 64
    }
    guard ["check", "apply"].contains(action), files.count == 1 else {
        printError("usage: roost app check|apply FILE\nRun 'roost app --help' for details.")
        return 64
    }
    let definition: AppDefinition
    do {
        definition = try AppDefinitionSource.load(files[0])
    } catch {
        printError("\(files[0]): \(error)")
        return 65
    }
    if action == "check" {
        let count = definition.collections.count
        say("\(files[0]) is valid: \(count) collection\(count == 1 ? "" : "s") declared")
        return 0
    }
    if database.databaseURL != nil { return await applyShared(file: files[0], database: database) }
    return await apply(file: files[0], dataDirectory: database.dataDirectory)
}

/// Stores a valid definition in the shared database, where every instance finds it.
private func applyShared(file: String, database: CommandDatabase) async -> Int32 {
    do {
        let text = Array(try Data(contentsOf: URL(fileURLWithPath: file)))
        let revision = try await database.withStorage { storage in
            try await storage.sharedDefinitions?.storeDefinition(
                text, at: Int64(Date().timeIntervalSince1970 * 1000)) ?? 0
        }
        say(
            "roost: \(file) is revision \(revision) of the app definition; every server on the database puts it in force within a second"
        )
        return 0
    } catch {
        printError("\(error)")
        return exitStatus(for: error)
    }
}

private func apply(file: String, dataDirectory: String) async -> Int32 {
    guard let pidText = try? String(contentsOfFile: ServerFiles.pidFile(dataDirectory), encoding: .utf8)
    else {
        printError(
            "no server is running on \(dataDirectory) (no roost.pid); start one with 'roost serve --app FILE'"
        )
        return 69
    }
    let lines = pidText.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    guard let pid = Int32(lines.first ?? ""), kill(pid, 0) == 0 else {
        printError("the server recorded in \(dataDirectory)/roost.pid is not running; start it again")
        return 69
    }
    guard lines.count > 1, !lines[1].isEmpty else {
        printError("the server on \(dataDirectory) was started without --app; restart it with --app FILE")
        return 69
    }
    let target = lines[1]
    do {
        let source = URL(fileURLWithPath: file).standardizedFileURL.path
        if source != URL(fileURLWithPath: target).standardizedFileURL.path {
            // Written beside the target and renamed, so the server never reads half a file.
            let contents = try Data(contentsOf: URL(fileURLWithPath: file))
            try contents.write(to: URL(fileURLWithPath: target), options: .atomic)
            say("roost: installed \(file) as \(target)")
        }
    } catch {
        printError("cannot write \(target): \(error.localizedDescription)")
        return 73
    }
    let statusPath = ServerFiles.reloadStatus(dataDirectory)
    try? FileManager.default.removeItem(atPath: statusPath)
    kill(pid, SIGHUP)
    for _ in 0..<100 {
        if let status = try? String(contentsOfFile: statusPath, encoding: .utf8), status.hasSuffix("\n") {
            if status.hasPrefix("ok") {
                say("roost: the server (pid \(pid)) now runs \(target)")
                return 0
            }
            printError("the server refused the definition and keeps the running one: \(status)")
            return 65
        }
        try? await Task.sleep(nanoseconds: 100_000_000)
    }
    printError("the server (pid \(pid)) did not confirm the reload within 10 seconds; check its log")
    return 75
}

/// `roost app import application.ffdl [--output roost.json]`.
private func importFFDL(_ arguments: [String]) -> Int32 {
    var files: [String] = []
    var output: String?
    var index = 0
    while index < arguments.count {
        if arguments[index] == "--output", index + 1 < arguments.count {
            output = arguments[index + 1]
            index += 2
        } else {
            files.append(arguments[index])
            index += 1
        }
    }
    guard files.count == 1 else {
        printError("usage: roost app import application.ffdl [--output roost.json]")
        return 64
    }
    guard let text = try? String(contentsOfFile: files[0], encoding: .utf8) else {
        printError("cannot read \(files[0])")
        return 66
    }
    let result = FFDLImport(ffdl: text)
    for line in result.lines where line.outcome != .translated {
        printError("\(files[0]):\(line.number): \(line.outcome.rawValue): \(line.text)\n    \(line.reason)")
    }
    guard let output else {
        print(result.definitionText, terminator: "")
        return 0
    }
    guard !FileManager.default.fileExists(atPath: output) else {
        printError("\(output) exists; choose another --output or remove it first")
        return 73
    }
    guard FileManager.default.createFile(atPath: output, contents: Data(result.definitionText.utf8)) else {
        printError("cannot write \(output)")
        return 73
    }
    let translated = result.lines.filter { $0.outcome == .translated }.count
    say(
        "roost: wrote \(output) from \(translated) of \(result.lines.count) lines; check it with 'roost app check \(output)'"
    )
    return 0
}
