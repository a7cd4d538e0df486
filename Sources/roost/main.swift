import CRoostSystem
import Foundation
import RoostCore
import RoostDrivers
import RoostHTTP
import RoostPush
import RoostServer
import RoostStore

let version = RoostRelease.version

let mainHelp = """
    roost \(version): a self-hosted backend for apps

    USAGE:
      roost <command> [options]

    COMMANDS:
      serve      Run the server (SQLite in the data folder)
      users      List users, create administrators, promote, demote, reset passwords, delete
      index      Index JSON fields for fast queries
      app        Check an app definition (roost.json) or apply it to a running server
      blobs      Remove blob files nothing refers to any more
      events     List and retry failed runs of ASYNC script handlers
      push       Send a test notification to a user's devices (roost push test --user NAME)
      mail       Send a test message through the SMTP server (roost mail test ADDRESS)
      backup     Copy the data folder while the server runs
      restore    Replace the data folder with a backup
      migrate    List (--dry-run) or apply the schema migrations this version brings
      script     Run a JavaScript file against a data folder, as a handler would
      version    Print the version and the commit it was built from
      help       Show help for a command, e.g. 'roost help serve'

    'roost help COMMAND' and 'roost COMMAND --help' print the same help.
    """

let versionHelp = """
    Print Roost's version and the git commit it was built from.

    USAGE:
      roost version

    The commit is stamped by scripts/install.sh (and so by deploy/Dockerfile); a plain
    'swift build' says "commit unknown".
    """

let helpHelp = """
    Show help for a command: the same text as 'roost COMMAND --help'.

    USAGE:
      roost help [COMMAND]

    Without a command, lists the commands.
    """

/// Each command's help: what both 'roost help COMMAND' and 'roost COMMAND --help' print.
let commandHelp: [String: () -> String] = [
    "serve": serveHelp, "users": { usersHelp }, "index": { indexHelp }, "app": { appHelp },
    "blobs": { blobsHelp }, "events": { eventsHelp }, "push": pushHelp, "mail": mailHelp,
    "backup": { backupHelp },
    "restore": { restoreHelp },
    "migrate": { migrateHelp }, "script": { scriptHelp }, "version": { versionHelp }, "help": { helpHelp },
]

func serveHelp() -> String {
    var lines = [
        "Run the Roost server.",
        "",
        "USAGE:",
        "  roost serve [options]",
        "",
        "OPTIONS:",
    ]
    lines += ServeOption.helpLines(ServeOption.all)
    lines += [
        "  -h, --help                    show this help",
        "",
        "Flags override environment variables; the app definition's settings override",
        "--session-policy and --token-lifetime. SIGINT or SIGTERM stops the server after",
        "the requests in flight are answered; SIGHUP reloads the app definition and the",
        "TLS certificate and key (open connections keep theirs).",
        "",
        "A TLS certificate or key that cannot be used (unreadable, not PEM, not a pair)",
        "stops the start with a message naming the file, exit status \(tlsExitStatus).",
        "",
        "One server per data folder: it holds an exclusive lock on DATA/roost.lock, and a",
        "second 'roost serve' on the same folder exits with status \(DataFolderLock.heldExitStatus).",
        "",
        "EXAMPLE:",
        "  roost serve --host 0.0.0.0 --port 8080 --data-dir /var/lib/roost --app roost.json",
    ]
    return lines.joined(separator: "\n")
}

/// Writes a line to standard output unbuffered, so a supervising process sees it at once.
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

func printError(_ message: String) {
    FileHandle.standardError.write(Data("roost: \(message)\n".utf8))
}

/// The exit status when the TLS certificate or key cannot be used (sysexits' EX_CONFIG).
let tlsExitStatus: Int32 = 78

func serve(_ arguments: [String]) async -> Int32 {
    if arguments.contains("--help") || arguments.contains("-h") {
        print(serveHelp())
        return 0
    }
    var configuration: ServerConfiguration
    do {
        configuration = try ServeOption.configuration(
            arguments: arguments, environment: ProcessInfo.processInfo.environment)
    } catch let error as UsageError {
        printError("\(error.message)\nRun 'roost serve --help' for the options.")
        return 64
    } catch {
        printError("\(error)")
        return 64
    }
    do {
        try DataFolderLock.acquire(configuration.dataDirectory, command: "roost serve")
    } catch {
        switch error {
        case .held(let holder):
            printError(
                "cannot start: " + DataFolderLock.heldMessage(configuration.dataDirectory, holder: holder))
            return DataFolderLock.heldExitStatus
        case .unavailable(let message):
            printError("cannot start: \(message)")
            return 1
        }
    }
    warnIfDataFolderIsShared(configuration.dataDirectory)
    // Caught from here on: a SIGTERM while the database opens is answered by a clean stop once
    // started, not by dying mid-migration.
    let termination = TerminationSignal()
    // A fixed threshold keeps glibc from raising it after the first large free, so the 19 MiB
    // blocks of each Argon2id hash are unmapped when done instead of staying resident.
    roost_set_mmap_threshold(1 << 20)
    let application: Application
    do {
        configuration.push.sender = try StandardDrivers.pushSender(for: configuration.push.providers)
        configuration.mail.sender = try StandardDrivers.mailSender(
            for: configuration.mail.smtp, environment: ProcessInfo.processInfo.environment)
        application = try Application(configuration: configuration)
        try await application.start()
    } catch let error as TLSConfigurationError {
        printError("cannot start: \(error.message)")
        return tlsExitStatus
    } catch let error as PushConfigurationError {
        printError("cannot start: \(error.description)")
        return 78
    } catch let error as AppDefinitionError {
        printError("cannot start: \(configuration.appDefinitionPath ?? "app definition"): \(error)")
        return 65
    } catch let error as SchemaTooNewError {
        printError("cannot start: \(error)")
        return schemaTooNewExitStatus
    } catch {
        printError("cannot start: \(error)")
        return 1
    }
    let pidFile = ServerFiles.pidFile(configuration.dataDirectory)
    let appPath =
        configuration.appDefinitionPath.map { URL(fileURLWithPath: $0).standardizedFileURL.path } ?? ""
    _ = FileManager.default.createFile(
        atPath: pidFile, contents: Data("\(getpid())\n\(appPath)\n".utf8),
        attributes: [.posixPermissions: 0o600])
    reloadOnHangup(application, dataDirectory: configuration.dataDirectory)
    let scheme = application.isSecure ? "https" : "http"
    let announcements = ServerAnnouncements(format: configuration.logFormat)
    let url = "\(scheme)://\(configuration.host):\(application.port)"
    announcements.announce(
        "roost \(version) listening on \(url) (data: \(configuration.dataDirectory))", event: "listening",
        fields: [("url", url), ("version", version), ("dataDirectory", configuration.dataDirectory)])
    if let redirectPort = application.redirectPort {
        let from = "http://\(configuration.host):\(redirectPort)"
        announcements.announce(
            "roost: redirecting \(from) to https", event: "redirecting", fields: [("url", from)])
    }
    SystemdNotification.ready(status: "listening on \(url)")
    await termination.wait()
    SystemdNotification.stopping()
    announcements.announce("roost: shutting down; finishing requests in flight", event: "shutting-down")
    await application.shutdown()
    try? FileManager.default.removeItem(atPath: pidFile)
    return 0
}

/// SIGINT and SIGTERM, caught from the moment this is made: a signal that arrives before anyone
/// waits (right after "listening" is printed, say) is kept, not lost or fatal.
final class TerminationSignal: @unchecked Sendable {
    // @unchecked Sendable: `arrived` and `waiter` are only touched under the lock.
    private let lock = NSLock()
    private var arrived = false
    private var waiter: CheckedContinuation<Void, Never>?

    init() {
        signal(SIGINT, SIG_IGN)
        signal(SIGTERM, SIG_IGN)
        let queue = DispatchQueue(label: "roost-signals")
        let sources = [SIGINT, SIGTERM].map { DispatchSource.makeSignalSource(signal: $0, queue: queue) }
        for source in sources {
            source.setEventHandler { [self] in
                lock.lock()
                let waiting = arrived ? nil : waiter
                arrived = true
                waiter = nil
                lock.unlock()
                waiting?.resume()
            }
            source.resume()
        }
        SignalSources.keep(sources)
    }

    /// Suspends until SIGINT or SIGTERM has arrived.
    func wait() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            lock.lock()
            if arrived {
                lock.unlock()
                continuation.resume()
            } else {
                waiter = continuation
                lock.unlock()
            }
        }
    }
}

/// Keeps the signal sources alive for the life of the process.
enum SignalSources {
    nonisolated(unsafe) private static var sources: [any DispatchSourceSignal] = []
    static func keep(_ new: [any DispatchSourceSignal]) { sources += new }
}

let arguments = Array(CommandLine.arguments.dropFirst())
// Everything Roost creates in a data folder (database, WAL, blobs, pid and lock files) holds
// password hashes, emails or user data: owner-only. `app apply` writes the user's own file instead.
if arguments.first != "app" { umask(0o077) }
let status: Int32
switch arguments.first {
case nil, "--help", "-h":
    print(mainHelp)
    status = 0
case "help":
    // 'roost help --help' is help about help, like any 'roost COMMAND --help'.
    let topic = arguments.dropFirst().first.map { ["-h", "--help"].contains($0) ? "help" : $0 }
    if let topic, commandHelp[topic] == nil {
        printError("unknown command '\(topic)'\nRun 'roost --help' for the commands.")
        status = 64
    } else {
        print(topic.flatMap { commandHelp[$0]?() } ?? mainHelp)
        status = 0
    }
case "version", "--version":
    if arguments.dropFirst().contains(where: { ["-h", "--help"].contains($0) }) {
        print(versionHelp)
    } else {
        print("roost \(version) (commit \(BuildInfo.commit ?? "unknown"))")
    }
    status = 0
case "serve":
    status = await serve(Array(arguments.dropFirst()))
case "users":
    status = await users(Array(arguments.dropFirst()))
case "index":
    status = await index(Array(arguments.dropFirst()))
case "app":
    status = await app(Array(arguments.dropFirst()))
case "blobs":
    status = await blobs(Array(arguments.dropFirst()))
case "events":
    status = await events(Array(arguments.dropFirst()))
case "push":
    status = await push(Array(arguments.dropFirst()))
case "mail":
    status = await mail(Array(arguments.dropFirst()))
case "backup":
    status = await backup(Array(arguments.dropFirst()))
case "restore":
    status = await restore(Array(arguments.dropFirst()))
case "migrate":
    status = await migrate(Array(arguments.dropFirst()))
case "script":
    status = await script(Array(arguments.dropFirst()))
case "script-worker":
    status = scriptWorker()
default:
    printError("unknown command '\(arguments[0])'\nRun 'roost --help' for the commands.")
    status = 64
}
exit(status)
