import Foundation
import RoostSQLite
import RoostStore

/// The exclusive lock on a data folder: one server (or one admin command that must not run
/// beside a server) at a time.
///
/// `flock` on `roost.lock` in the folder, held for the life of the process and released by the
/// kernel however the process ends, so a crash never leaves a stale lock. The file holds the
/// holder's pid and command, to name it to whoever finds the folder taken. It is never deleted:
/// deleting it would let a second process lock a new file while the first still holds the old one.
struct DataFolderLock {
    static let fileName = "roost.lock"
    /// The exit status of `roost serve` (and of admin commands that need the folder to themselves)
    /// when another process holds the folder.
    static let heldExitStatus: Int32 = 75

    /// Why the folder could not be locked.
    enum Failure: Error {
        /// Another process holds the lock; its pid and command when it wrote them.
        case held(holder: String?)
        case unavailable(String)
    }

    /// Locks are held until exit: descriptors stay open here for the life of the process.
    nonisolated(unsafe) private static var held: [Int32] = []

    /// Takes the lock on `directory` (creating the folder 0700 if needed) for the rest of the
    /// process's life, or throws ``Failure/held(holder:)`` at once if another process has it.
    static func acquire(_ directory: String, command: String) throws(Failure) {
        do {
            try FileManager.default.createDirectory(
                atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw .unavailable("cannot create the data folder \(directory): \(error.localizedDescription)")
        }
        let path = directory + "/" + fileName
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw .unavailable("cannot open \(path): \(String(cString: strerror(errno)))")
        }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            let code = errno
            let holder = holderDescription(descriptor)
            close(descriptor)
            if code == EWOULDBLOCK { throw .held(holder: holder) }
            throw .unavailable("cannot lock \(path): \(String(cString: strerror(code)))")
        }
        let record = Array("\(getpid()) \(command)\n".utf8)
        ftruncate(descriptor, 0)
        _ = record.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, 0) }
        held.append(descriptor)
    }

    /// "pid 1234, roost serve" from the lock file, or nil when it is empty or unreadable.
    private static func holderDescription(_ descriptor: Int32) -> String? {
        var buffer = [UInt8](repeating: 0, count: 256)
        let count = pread(descriptor, &buffer, buffer.count, 0)
        guard count > 0 else { return nil }
        let text = String(decoding: buffer[..<count], as: UTF8.self).trimmingCharacters(
            in: .whitespacesAndNewlines)
        guard let space = text.firstIndex(of: " "), Int32(text[..<space]) != nil else { return nil }
        return "pid \(text[..<space]), \(text[text.index(after: space)...])"
    }

    /// The message for a folder another process holds.
    static func heldMessage(_ directory: String, holder: String?) -> String {
        "another Roost process (\(holder ?? "pid unknown")) is using the data folder \(directory); "
            + "stop it first, or give this one another --data-dir"
    }
}

/// Takes the data folder's lock for an admin command that must not run beside a server; prints why
/// and returns the exit status when it cannot.
func lockForAdminCommand(_ directory: String, command: String, instead: String) -> Int32? {
    do {
        try DataFolderLock.acquire(directory, command: command)
        return nil
    } catch {
        switch error {
        case .held(let holder):
            printError(
                "another Roost process (\(holder ?? "pid unknown")) is using the data folder \(directory); "
                    + "\(command) needs the folder to itself. \(instead)")
            return DataFolderLock.heldExitStatus
        case .unavailable(let message):
            printError(message)
            return 1
        }
    }
}

/// Warns once at start when the data folder lets its group or other users in.
func warnIfDataFolderIsShared(_ directory: String) {
    var status = stat()
    guard stat(directory, &status) == 0, status.st_mode & 0o077 != 0 else { return }
    let mode = String(status.st_mode & 0o777, radix: 8)
    printError(
        "warning: the data folder \(directory) is open to other users (mode \(mode)); it holds password "
            + "hashes and emails. Run: chmod 700 \(directory)")
}

/// The exit status of an admin command pointed at a folder that holds no Roost database.
let noDatabaseExitStatus: Int32 = 66
/// EX_NOPERM: the data folder or its database is not readable by this user.
let noPermissionExitStatus: Int32 = 77

/// Whether `directory` holds a Roost database: `roost.sqlite`, and a SQLite file at that.
func holdsRoostDatabase(_ directory: String) -> Bool {
    guard let handle = FileHandle(forReadingAtPath: directory + "/" + SQLiteStorage.fileName) else {
        return false
    }
    defer { try? handle.close() }
    let header = (try? handle.read(upToCount: 16)) ?? Data()
    return header == Data("SQLite format 3\0".utf8)
}

/// Admin commands act on the database a server made; one pointed at the wrong folder (a typo,
/// a missing --data-dir) must say so rather than create an empty database the server never reads.
/// Prints why and returns the exit status when `directory` holds no Roost database.
func requireRoostDatabase(_ directory: String) -> Int32? {
    guard !holdsRoostDatabase(directory) else { return nil }
    // A folder or database this user may not read is not a missing one: say which.
    let database = directory + "/" + SQLiteStorage.fileName
    for path in [directory, database] where FileManager.default.fileExists(atPath: path) {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        if descriptor >= 0 {
            close(descriptor)
        } else if errno == EACCES || errno == EPERM {
            printError(
                "cannot read \(path): permission denied. Run the command as the user the server runs as "
                    + "(e.g. sudo -u roost roost …), which owns the data folder.")
            return noPermissionExitStatus
        }
    }
    let missing =
        FileManager.default.fileExists(atPath: directory)
        ? "there is no Roost database in \(directory) (no \(SQLiteStorage.fileName))"
        : "there is no data folder at \(directory)"
    printError(
        "\(missing); nothing was created. "
            + "Pass the folder the server uses with --data-dir (or ROOST_DATA_DIR), "
            + "or start 'roost serve --data-dir \(directory)' once to create it.")
    return noDatabaseExitStatus
}
