import Foundation
import RoostCore
import RoostServer

let appHelp = """
    Check or apply an app definition (roost.json): access rules, owner-only fields, indexes,
    settings, and server-side handlers and extensions with the script files of the scripts
    folder next to it.

    USAGE:
      roost app check FILE
      roost app apply FILE [--data-dir PATH]
      roost app apply FILE --database URL
      roost app import application.ffdl [--output roost.json]

    check   validates FILE and prints the first problem with its line or field.
    apply   validates FILE, installs it as the definition of the server running on the data
            folder (which must have been started with --app: apply replaces that file, keeping
            the one it replaces as FILE.previous), and has the server reload it without
            dropping a connection. An invalid file is refused and the running definition stays.

    import  translates a FatFractal app definition into a Roost one (standard output, or the
            --output file, which must not exist yet) and lists on standard error every line it
            could not translate, and why. From FatFractal's layout (ff-config/application.ffdl
            beside ff-scripts/), --output also copies the ff-scripts .js files into the scripts
            folder next to the output.

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
        SystemdNotification.reloading()
        reloadTLS(application)
        Task {
            defer { SystemdNotification.reloaded() }
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
            application.logger.info(
                "TLS certificate reloaded from \(application.configuration.tlsCertificatePath ?? "")")
        }
    } catch {
        application.logger.error("TLS certificate not reloaded; the running one stays in force: \(error)")
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
        say("\(files[0]) is valid: \(summary(of: definition)) declared")
        return 0
    }
    if database.databaseURL != nil { return await applyShared(file: files[0], database: database) }
    return await apply(file: files[0], dataDirectory: database.dataDirectory)
}

/// Stores a valid definition in the shared database, where every instance finds it.
private func applyShared(file: String, database: CommandDatabase) async -> Int32 {
    do {
        // The definition and its scripts, read again as they were checked.
        let bundle = try AppDefinitionSource.files(file).bundle
        let revision = try await database.withStorage { storage in
            try await storage.sharedDefinitions?.storeDefinition(
                bundle, at: Int64(Date().timeIntervalSince1970 * 1000)) ?? 0
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
            // Written beside the target and renamed, so the server never reads half a file; the
            // file it replaces is kept, since it may be the operator's only copy.
            let contents = try Data(contentsOf: URL(fileURLWithPath: file))
            let previous = target + ".previous"
            if let old = FileManager.default.contents(atPath: target) {
                try old.write(to: URL(fileURLWithPath: previous), options: .atomic)
            }
            try contents.write(to: URL(fileURLWithPath: target), options: .atomic)
            say("roost: installed \(file) as \(target) (the definition it replaced is kept as \(previous))")
            warnAboutScripts(source: source, target: target)
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

/// "2 collections, 1 handler, 1 extension, 3 script files".
private func summary(of definition: AppDefinition) -> String {
    func count(_ number: Int, _ noun: String) -> String { "\(number) \(noun)\(number == 1 ? "" : "s")" }
    var parts = [count(definition.collections.count, "collection")]
    let scripts = definition.scripts
    if !scripts.handlers.isEmpty { parts.append(count(scripts.handlers.count, "handler")) }
    if !scripts.extensions.isEmpty { parts.append(count(scripts.extensions.count, "extension")) }
    if !scripts.modules.isEmpty { parts.append(count(scripts.modules.count, "script file")) }
    return parts.joined(separator: ", ")
}

/// The server reads the scripts folder next to the file it runs, not the one next to FILE.
private func warnAboutScripts(source: String, target: String) {
    let folder = { (path: String) in URL(fileURLWithPath: path).deletingLastPathComponent().path + "/scripts"
    }
    guard folder(source) != folder(target), FileManager.default.fileExists(atPath: folder(source)) else {
        return
    }
    printError(
        "note: the server reads script files from \(folder(target)), not \(folder(source)); copy them there")
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
    for line in result.lines {
        guard let warning = line.warning else { continue }
        printError("\(files[0]):\(line.number): warning: \(line.text)\n    \(warning)")
    }
    // FatFractal's layout: ff-config/application.ffdl beside ff-scripts/, whose files its
    // require('scripts/X') loaded.
    let configFolder = URL(fileURLWithPath: files[0]).standardizedFileURL.deletingLastPathComponent()
    let ffScripts = configFolder.deletingLastPathComponent().appendingPathComponent("ff-scripts").path
    var modules: [String: String] = [:]
    if configFolder.lastPathComponent == "ff-config" {
        do {
            modules = try ScriptFolder.modules(in: ffScripts, label: "ff-scripts")
        } catch {
            printError("\(error)")
            return 65
        }
    }
    guard let output else {
        print(result.definitionText, terminator: "")
        if !modules.isEmpty {
            printError(
                "note: the \(modules.count) script files of \(ffScripts) are copied only with --output roost.json, into the scripts folder next to it"
            )
        }
        return 0
    }
    return writeImport(result, modules: modules, from: ffScripts, to: output)
}

/// Writes the imported definition and copies FatFractal's script files next to it; nothing is
/// written when a file would be overwritten.
private func writeImport(
    _ result: FFDLImport, modules: [String: String], from ffScripts: String, to output: String
)
    -> Int32
{
    let scriptsFolder = URL(fileURLWithPath: output).deletingLastPathComponent().appendingPathComponent(
        "scripts")
    let copies = modules.sorted { $0.key < $1.key }.map { id, source in
        (
            path: scriptsFolder.path + "/" + id.dropFirst(ScriptSettings.modulePrefix.count) + ".js",
            source: source
        )
    }
    for path in [output] + copies.map(\.path) where FileManager.default.fileExists(atPath: path) {
        printError("\(path) exists; choose another --output or remove it first")
        return 73
    }
    guard FileManager.default.createFile(atPath: output, contents: Data(result.definitionText.utf8)) else {
        printError("cannot write \(output)")
        return 73
    }
    for copy in copies {
        let folder = URL(fileURLWithPath: copy.path).deletingLastPathComponent().path
        guard
            (try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true))
                != nil,
            FileManager.default.createFile(atPath: copy.path, contents: Data(copy.source.utf8))
        else {
            printError("cannot write \(copy.path)")
            return 73
        }
    }
    let translated = result.lines.filter { $0.outcome == .translated }.count
    say("roost: wrote \(output) from \(translated) of \(result.lines.count) lines")
    if !copies.isEmpty {
        say("roost: copied \(copies.count) script files from \(ffScripts) into \(scriptsFolder.path)")
    }
    do {
        _ = try AppDefinitionSource.load(output)
        say("roost: \(output) is valid; run it with 'roost serve --app \(output)'")
    } catch {
        printError("note: 'roost app check \(output)' refuses it as written: \(error)")
    }
    return 0
}
