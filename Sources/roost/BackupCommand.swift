import Foundation
import RoostSQLite
import RoostStore

let backupHelp = """
    Copy a data folder while the server runs: the database as of one moment, and the blob files
    it refers to.

    USAGE:
      roost backup DEST [--data-dir PATH]

    DEST must not exist, or be an empty folder; it becomes a data folder of its own (0700, files
    0600) holding roost.sqlite and blobs/. Writes carry on while the copy runs; the copy holds every
    write acknowledged before the backup began, and is checked with PRAGMA integrity_check. Blob
    files are hard-linked into DEST when it is on the same file system (blob files never change,
    so a link is a full copy that costs no space; copy DEST to another disk or machine to survive
    the loss of this one), copied otherwise. Progress is shown on a terminal.

    EXAMPLE:
      roost backup /var/backups/roost-$(date +%F) --data-dir /var/lib/roost
    """

let restoreHelp = """
    Replace a data folder with a backup.

    USAGE:
      roost restore SRC [--data-dir PATH] [--keep-sessions]

    SRC is a folder made by 'roost backup'. Its database must pass PRAGMA integrity_check and have
    a schema this roost knows (an older one is migrated when the server starts, or by
    'roost migrate'). The restore needs the data folder to itself: it exits with status 75 while a
    server runs on it. SRC is copied beside the data folder first, then swapped in by renaming; the
    previous folder is kept as PATH.before-restore-TIME until you remove it.

    Every session in the restored database ends (users log in again): a token revoked after the
    backup was made, a stolen one say, must not come back with it. --keep-sessions keeps them, for
    a restore that undoes no revocation (the same machine's folder moved back, say). Passwords
    changed after the backup are the backup's again; see docs/operating.md, "Backups".

    EXAMPLE:
      roost restore /var/backups/roost-2026-11-30 --data-dir /var/lib/roost
    """

/// Exit status for a database whose schema is newer than this build (sysexits' EX_CONFIG).
let schemaTooNewExitStatus: Int32 = 78

/// `roost backup DEST`: returns the exit status.
func backup(_ arguments: [String]) async -> Int32 {
    let dataDirectory: String
    let destination: String
    switch oneFolder(arguments, command: "backup", help: backupHelp, folder: "one destination folder") {
    case .exit(let status): return status
    case .folder(let directory, let name): (dataDirectory, destination) = (directory, name)
    }
    if let status = requireRoostDatabase(dataDirectory) { return status }
    let source = dataDirectory + "/" + SQLiteStorage.fileName
    if let status = prepareEmptyFolder(destination) { return status }
    do {
        let progress = TerminalProgress()
        let database = try SQLiteBackup.copyDatabase(
            from: source, to: destination + "/" + SQLiteStorage.fileName
        ) { done, total in progress.show("database", done, total) }
        let blobs = try SQLiteBackup.copyBlobs(database.blobDigests, from: dataDirectory, to: destination) {
            done, total in progress.show("blobs", done, total)
        }
        progress.finish()
        for digest in blobs.missing {
            printError("warning: blob \(digest) is referenced but its file is missing")
        }
        say(
            "backed up \(dataDirectory) to \(destination): database \(describe(bytes: database.bytes)) "
                + "(schema version \(database.schema.version)), \(blobs.linked + blobs.copied) blob(s) "
                + "\(describe(bytes: blobs.bytes)) (\(blobs.linked) hard-linked, \(blobs.copied) copied)"
                + (blobs.missing.isEmpty ? "" : ", \(blobs.missing.count) missing"))
        return 0
    } catch {
        printError("backup failed: \(error)")
        return 1
    }
}

/// Makes `path` an empty folder (0700); prints why and returns the exit status when it holds
/// anything already.
func prepareEmptyFolder(_ path: String) -> Int32? {
    let manager = FileManager.default
    var isFolder: ObjCBool = false
    if manager.fileExists(atPath: path, isDirectory: &isFolder) {
        guard isFolder.boolValue, (try? manager.contentsOfDirectory(atPath: path))?.isEmpty == true else {
            printError("\(path) exists and is not an empty folder; give a new path")
            return 73
        }
        chmod(path, 0o700)
        return nil
    }
    do {
        try manager.createDirectory(
            atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        return nil
    } catch {
        printError("cannot create \(path): \(error.localizedDescription)")
        return 73
    }
}

/// `roost restore SRC`: returns the exit status.
func restore(_ arguments: [String]) async -> Int32 {
    let dataDirectory: String
    let source: String
    let keepSessions = arguments.contains("--keep-sessions")
    let arguments = arguments.filter { $0 != "--keep-sessions" }
    switch oneFolder(arguments, command: "restore", help: restoreHelp, folder: "one backup folder") {
    case .exit(let status): return status
    case .folder(let directory, let name): (dataDirectory, source) = (directory, name)
    }
    let sourceDatabase = source + "/" + SQLiteStorage.fileName
    guard FileManager.default.fileExists(atPath: sourceDatabase) else {
        printError("there is no Roost backup in \(source) (no \(SQLiteStorage.fileName))")
        return 66
    }
    do {
        let problems: [String]
        let schema: SchemaStatus
        do {
            (problems, schema) = try SQLiteStorage.inspect(databasePath: sourceDatabase)
        } catch let error as SQLiteError {
            printError("\(sourceDatabase) cannot be read as a Roost database; nothing was changed: \(error)")
            return 65
        }
        guard problems.isEmpty else {
            printError(
                "\(sourceDatabase) fails PRAGMA integrity_check; nothing was changed:\n  "
                    + problems.prefix(10).joined(separator: "\n  "))
            return 65
        }
        if let refusal = schema.refusal(path: sourceDatabase) {
            printError("nothing was changed: \(refusal)")
            return schemaTooNewExitStatus
        }
        return try swapIn(
            source: source, schema: schema, dataDirectory: dataDirectory, keepSessions: keepSessions)
    } catch {
        printError("restore failed: \(error)")
        return 1
    }
}

/// Copies the backup beside the data folder, then swaps it in under the folder's lock.
private func swapIn(source: String, schema: SchemaStatus, dataDirectory: String, keepSessions: Bool)
    throws -> Int32
{
    let target = URL(fileURLWithPath: dataDirectory).standardizedFileURL.path
    if let status = lockForAdminCommand(
        target, command: "'roost restore'", instead: "Stop the server first, then restore.")
    {
        return status
    }
    let stamp = ISO8601DateFormatter.string(
        from: Date(), timeZone: TimeZone(identifier: "UTC")!,
        formatOptions: [.withYear, .withMonth, .withDay, .withTime, .withTimeZone]
    )
    .replacingOccurrences(of: ":", with: "")
    let staging = "\(target).restoring-\(stamp)"
    let aside = "\(target).before-restore-\(stamp)"
    if let status = prepareEmptyFolder(staging) { return status }
    do {
        let progress = TerminalProgress()
        let database = try SQLiteBackup.copyDatabase(
            from: source + "/" + SQLiteStorage.fileName, to: staging + "/" + SQLiteStorage.fileName
        ) { done, total in progress.show("database", done, total) }
        let blobs = try SQLiteBackup.copyBlobs(database.blobDigests, from: source, to: staging) {
            done, total in progress.show("blobs", done, total)
        }
        progress.finish()
        for digest in blobs.missing {
            printError("warning: blob \(digest) is referenced but not in the backup")
        }
        let endedSessions =
            keepSessions
            ? nil : try SQLiteBackup.endSessions(databasePath: staging + "/" + SQLiteStorage.fileName)
        // The lock file stays in the folder moved aside (and is held until this process ends);
        // the restored folder gets its own when a server starts on it.
        let previous = (try? FileManager.default.contentsOfDirectory(atPath: target)) ?? []
        let keepPrevious = previous.contains { $0 != DataFolderLock.fileName }
        guard rename(target, aside) == 0 else {
            throw RestoreError("cannot move \(target) aside: \(String(cString: strerror(errno)))")
        }
        guard rename(staging, target) == 0 else {
            let reason = String(cString: strerror(errno))
            rename(aside, target)
            throw RestoreError(
                "cannot move the restored folder into place: \(reason); \(target) is unchanged")
        }
        if !keepPrevious { try? FileManager.default.removeItem(atPath: aside) }
        say(
            "restored \(source) into \(target): schema version \(schema.version), "
                + "\(blobs.linked + blobs.copied) blob(s)")
        if let endedSessions {
            say(
                "ended the backup's \(endedSessions) session(s): users log in again (--keep-sessions keeps them)"
            )
        } else {
            say("kept the backup's sessions (--keep-sessions): tokens revoked since the backup work again")
        }
        if keepPrevious {
            say("the previous data folder is kept at \(aside); remove it once the server runs well")
        }
        if !schema.pending.isEmpty {
            say(
                "the backup's schema is older than this roost's (\(schema.version) < \(schema.knownVersion)): "
                    + "'roost serve' migrates it at start, or run 'roost migrate' first")
        }
        return 0
    } catch {
        try? FileManager.default.removeItem(atPath: staging)
        throw error
    }
}

struct RestoreError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// A one-line progress report on standard error when it is a terminal; silent otherwise.
final class TerminalProgress {
    private let interactive = isatty(STDERR_FILENO) == 1
    private var lastDrawn = Date.distantPast
    private var drew = false

    func show(_ label: String, _ done: Int, _ total: Int) {
        guard interactive, Date().timeIntervalSince(lastDrawn) > 0.1 || done == total else { return }
        lastDrawn = Date()
        drew = true
        let percent = total == 0 ? 100 : done * 100 / total
        FileHandle.standardError.write(Data("\r\u{1B}[K\(label): \(done)/\(total) (\(percent)%)".utf8))
    }

    func finish() {
        if drew { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
    }
}

/// What a command that names one folder besides `--data-dir` was given.
enum OneFolderArguments {
    /// Help was printed or the arguments were wrong: exit with this status.
    case exit(Int32)
    case folder(dataDirectory: String, name: String)
}

/// Parses `COMMAND FOLDER [--data-dir D]`, printing the help or the usage error itself.
func oneFolder(_ arguments: [String], command: String, help: String, folder: String) -> OneFolderArguments {
    if arguments.isEmpty || arguments.contains("--help") || arguments.contains("-h") {
        print(help)
        return .exit(arguments.isEmpty ? 64 : 0)
    }
    guard let (dataDirectory, names) = dataDirectoryAndNames(arguments[...], command: command),
        names.count == 1
    else {
        printError("\(command) takes \(folder)\nRun 'roost \(command) --help' for the options.")
        return .exit(64)
    }
    return .folder(dataDirectory: dataDirectory, name: names[0])
}
