import Foundation
import RoostStore

/// The change log on the SQLite database: triggers on `objects` append to `changes` in the
/// statement's own transaction, so every write path (the object store, accounts, groups, blob
/// members, access lists, administrator commands) is logged without a line of Swift, and the
/// writer runs one more INSERT per write, nothing else. The row id is the sequence number: one
/// writer commits in order, and the newest entry is never trimmed, so ids are never reused.
public typealias SQLiteChangeLog = SQLChangeLog<SQLiteDatabase>

extension SQLChangeLog where Database == SQLiteDatabase {
    /// The writer's commits are the log's.
    public convenience init(database: SQLiteDatabase) {
        self.init(database: database, observeCommits: { database.observeCommits($0) })
    }

}
