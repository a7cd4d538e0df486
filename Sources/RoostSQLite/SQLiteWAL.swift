import Foundation
import RoostStore

/// Keeps the write-ahead log bounded. SQLite's automatic checkpoint is PASSIVE: it copies what no
/// reader still needs and never waits, so with reads always in flight the log is never reset and
/// grows to the size of the database. Past `bound` bytes, the writer runs a TRUNCATE checkpoint,
/// which waits briefly for readers of old snapshots, copies the log into the database and empties
/// it. Readers that keep it from finishing only delay it: what it copied stays copied, and it is
/// tried again after the next commit.
/// Made and used on the writer thread, like the connection it checkpoints.
final class WALPolicy {
    let path: String
    let bound: Int
    /// How long one checkpoint waits for readers (writes wait meanwhile); the writer's usual busy
    /// timeout is restored after.
    static let checkpointWaitMilliseconds = 100
    static let writerBusyTimeoutMilliseconds = 5000
    private(set) var attempts = 0
    private(set) var completed = 0

    init(path: String, bound: Int) {
        self.path = path
        self.bound = bound
    }

    /// The file's size, 0 when it does not exist.
    static func size(of path: String) -> Int {
        var status = stat()
        return stat(path, &status) == 0 ? Int(status.st_size) : 0
    }

    /// Checkpoints and truncates the log when it has passed the bound; on the writer thread,
    /// outside any transaction.
    func checkpointIfNeeded(_ writer: SQLiteConnection) {
        guard Self.size(of: path) > bound else { return }
        attempts += 1
        try? writer.execute("PRAGMA busy_timeout = \(Self.checkpointWaitMilliseconds)")
        // One row: 1 when readers kept it from finishing, frames in the log, frames copied.
        let busy = (try? writer.first("PRAGMA wal_checkpoint(TRUNCATE)") { $0.integer(0) }) ?? 1
        try? writer.execute("PRAGMA busy_timeout = \(Self.writerBusyTimeoutMilliseconds)")
        if busy == 0 { completed += 1 }
    }
}
