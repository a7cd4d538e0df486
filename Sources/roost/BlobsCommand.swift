import Foundation
import RoostCore
import RoostPostgres
import RoostStore

let blobsHelp = """
    Remove blob files that no object refers to any more.

    USAGE:
      roost blobs gc [--data-dir PATH] [--min-age SECONDS] [--dry-run]
      roost blobs gc --database URL [--blob-store database|directory --data-dir SHARED] [--min-age SECONDS]

    Deleting an object or a blob member releases its reference; the bytes stay on disk (another
    object may hold the same bytes) until gc finds nothing refers to them. The server runs the
    same sweep at start and every hour; this runs it now. Files younger than
    --min-age (default 3600) are kept, so an upload in flight on a running server is never taken.
    Temporary files of uploads whose server process is gone are removed too. The server may be
    running, if --min-age is at least 600 (below that, gc needs the data folder to itself and exits
    with status 75 while a server runs on it). --dry-run prints what would go.

    With --database (or ROOST_DATABASE_URL), gc works on the PostgreSQL database that instances
    share, and on its blobs: chunk rows in the database, or with --blob-store directory the files
    of the folder the instances share (--data-dir). Instances may be uploading meanwhile, so
    --min-age must be at least 600 there. Each instance removes its own abandoned uploads.

    EXAMPLE:
      roost blobs gc --data-dir /var/lib/roost
    """

/// The smallest `--min-age` allowed while a server runs on the folder.
let minimumAgeBesideServer = 600.0

/// `roost blobs gc`: returns the exit status.
func blobs(_ arguments: [String]) async -> Int32 {
    guard arguments.first == "gc" else {
        print(blobsHelp)
        return arguments.isEmpty || ["-h", "--help", "help"].contains(arguments[0]) ? 0 : 64
    }
    var rest = Array(arguments.dropFirst())
    var minimumAge = 3600.0
    var dryRun = false
    if let index = rest.firstIndex(of: "--dry-run") {
        dryRun = true
        rest.remove(at: index)
    }
    if let index = rest.firstIndex(of: "--min-age") {
        guard index + 1 < rest.count, let seconds = Double(rest[index + 1]), seconds >= 0 else {
            printError("--min-age takes a number of seconds, such as 3600")
            return 64
        }
        minimumAge = seconds
        rest.removeSubrange(index...index + 1)
    }
    var blobStore: String? = ProcessInfo.processInfo.environment["ROOST_BLOB_STORE"].flatMap {
        $0.isEmpty ? nil : $0
    }
    if let index = rest.firstIndex(of: "--blob-store") {
        guard index + 1 < rest.count else {
            printError("--blob-store takes 'database' or 'directory'")
            return 64
        }
        blobStore = rest[index + 1]
        rest.removeSubrange(index...index + 1)
    }
    guard let (database, names) = databaseAndNames(rest[...], command: "blobs"), names.isEmpty else {
        return 64
    }
    let dataDirectory = database.dataDirectory
    if let blobStore, blobStore != "database", blobStore != "directory" {
        printError("--blob-store takes 'database' or 'directory', not '\(blobStore)'")
        return 64
    }
    if database.databaseURL != nil {
        guard minimumAge >= minimumAgeBesideServer else {
            printError(
                "With --database, instances may be uploading: --min-age must be at least \(Int(minimumAgeBesideServer)) seconds."
            )
            return 64
        }
    } else {
        guard blobStore != "database" else {
            printError(
                "--blob-store database needs --database (the PostgreSQL database that holds the blobs)")
            return 64
        }
        if let status = requireRoostDatabase(dataDirectory) { return status }
        // Beside a running server, a blob between its upload's rename and commit is young and
        // unreferenced: only a minimum age keeps gc from taking it. Without a server, hold the folder.
        if minimumAge < minimumAgeBesideServer,
            let status = lockForAdminCommand(
                dataDirectory, command: "'roost blobs gc --min-age \(Int(minimumAge))'",
                instead:
                    "Beside a running server --min-age must be at least \(Int(minimumAgeBesideServer)) "
                    + "seconds, so uploads in flight are kept; or stop the server first.")
        {
            return status
        }
    }
    // Chunk rows need a local folder only for temporary files, which gc makes none of.
    let scratch = NSTemporaryDirectory() + "roost-gc-\(getpid())"
    defer { try? FileManager.default.removeItem(atPath: scratch) }
    do {
        let storage = try database.open()
        let blobStorage: any BlobStorage
        if let url = database.databaseURL, blobStore != "directory" {
            try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
            blobStorage = try PostgresBlobStorage(
                dataDirectory: scratch, configuration: PostgresConfiguration(connectionString: url))
        } else {
            blobStorage = try FileBlobStorage(dataDirectory: dataDirectory)
        }
        defer { blobStorage.close() }
        let collector = BlobCollector(
            storage: blobStorage, references: storage.objectStore,
            io: BackgroundWorkers(threads: 1, name: "roost-gc", lowPriority: false))
        var progress: Progress?
        let report = try await collector.collect(minimumAge: minimumAge, dryRun: dryRun) {
            done, total, blob in
            if progress == nil { progress = Progress(total: total, label: dryRun ? "checking" : "removing") }
            if dryRun { say("would remove \(blob.sha256) (\(blob.size) bytes)") }
            progress?.advance()
        }
        progress?.finish()
        await storage.close()
        say("\(dryRun ? "would free" : "freed") \(summary(report))")
        return 0
    } catch {
        printError("\(error)")
        return exitStatus(for: error)
    }
}

func summary(_ report: BlobCollector.Report) -> String {
    func plural(_ count: Int, _ noun: String) -> String { "\(count) \(noun)\(count == 1 ? "" : "s")" }
    return "\(plural(report.removedBlobs, "blob")) (\(describe(bytes: report.removedBytes))) and "
        + "\(plural(report.abandonedUploads, "abandoned upload")); \(plural(report.keptBlobs, "blob")) kept"
}

func describe(bytes: Int) -> String {
    bytes < 1024 * 1024 ? "\(bytes) bytes" : String(format: "%.1f MiB", Double(bytes) / 1_048_576)
}

/// A one-line progress bar on an interactive terminal; silent otherwise.
final class Progress {
    private let total: Int
    private let label: String
    private var done = 0
    private let interactive = isatty(STDOUT_FILENO) == 1
    private var lastDrawn = Date.distantPast

    init(total: Int, label: String) {
        self.total = total
        self.label = label
    }

    func advance() {
        done += 1
        guard interactive, Date().timeIntervalSince(lastDrawn) > 0.1 || done == total else { return }
        lastDrawn = Date()
        let width = 30
        let filled = total == 0 ? width : width * done / total
        let bar = String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled)
        FileHandle.standardOutput.write(Data("\r\(label) [\(bar)] \(done)/\(total)".utf8))
    }

    func finish() {
        if interactive && total > 0 { FileHandle.standardOutput.write(Data("\n".utf8)) }
    }
}
