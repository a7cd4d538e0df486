import CSQLite
import RoostStore

extension SQLiteError: OutOfSpaceReporting {
    /// Whether SQLite failed because the disk is full: `SQLITE_FULL`, or an I/O error whose
    /// system error was ENOSPC or EDQUOT (growing the shared-memory file, for instance).
    public var isOutOfSpace: Bool {
        code & 0xff == SQLITE_FULL
            || (code & 0xff == SQLITE_IOERR && OutOfSpaceError.isOutOfSpace(errno: systemErrno))
    }
}
