import Foundation
import RoostSQLite
import RoostStore

let migrateHelp = """
    Bring a database's schema up to this roost's version.

    USAGE:
      roost migrate [--dry-run] [--data-dir PATH]

    Each migration runs in a transaction of its own: one that fails leaves the database as it was
    before it, and stops the rest. 'roost serve' applies pending migrations at start; this applies
    them beforehand (it needs the data folder to itself, exit status 75 while a server runs on it),
    and --dry-run lists them without changing anything. A database written by a newer roost (a
    schema version above this one's) is refused, here and by 'roost serve', with exit status 78.

    EXAMPLE:
      roost migrate --dry-run --data-dir /var/lib/roost
    """

/// `roost migrate`: returns the exit status.
func migrate(_ arguments: [String]) async -> Int32 {
    if arguments.contains("--help") || arguments.contains("-h") {
        print(migrateHelp)
        return 0
    }
    var rest = arguments
    let dryRun = rest.contains("--dry-run")
    rest.removeAll { $0 == "--dry-run" }
    guard let (dataDirectory, names) = dataDirectoryAndNames(rest[...], command: "migrate"), names.isEmpty
    else { return 64 }
    let path = dataDirectory + "/" + SQLiteStorage.fileName
    guard FileManager.default.fileExists(atPath: path) else {
        printError("there is no Roost database in \(dataDirectory); pass --data-dir")
        return 66
    }
    do {
        let schema = try SQLiteStorage.inspect(databasePath: path).schema
        say(
            "\(path): schema version \(schema.version)"
                + (schema.writtenBy.map { ", last written by roost \($0)" } ?? "")
                + "; roost \(RoostRelease.version) knows schema versions up to \(schema.knownVersion)")
        if let refusal = schema.refusal(path: path) {
            printError(refusal.description)
            return schemaTooNewExitStatus
        }
        if schema.pending.isEmpty {
            say("nothing to migrate")
            return 0
        }
        if dryRun {
            say("\(schema.pending.count) pending migration(s), each in its own transaction:")
            for migration in schema.pending { say("  \(migration.version)  \(migration.name)") }
            return 0
        }
        if let status = lockForAdminCommand(
            dataDirectory, command: "'roost migrate'",
            instead: "'roost serve' applies migrations at start; or stop the server first.")
        {
            return status
        }
        var done = 0
        try SQLiteStorage.migrate(directory: dataDirectory) { migration in
            done += 1
            say("[\(done)/\(schema.pending.count)] applying \(migration.version) \(migration.name)")
        }
        say("migrated to schema version \(schema.knownVersion)")
        return 0
    } catch let error as SchemaTooNewError {
        printError(error.description)
        return schemaTooNewExitStatus
    } catch {
        printError("migration failed; the database is as it was before the failing migration: \(error)")
        return 1
    }
}

/// The exit status of an admin command that failed with `error`: 78 for a database from a newer
/// schema (as `roost serve` and `roost migrate`), 1 otherwise.
func exitStatus(for error: any Error) -> Int32 {
    error is SchemaTooNewError ? schemaTooNewExitStatus : 1
}
