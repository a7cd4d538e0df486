import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Where blob bytes live, named by their SHA-256 (hex), so identical bytes are kept once.
///
/// Uploads arrive in a temporary file of the storage's own (``makeTemporaryFile()``), are
/// flushed, then adopted under their digest. Reads hand out a file descriptor, which the HTTP
/// layer sends with `sendfile` and serves ranges from: a remote store (PostgreSQL's
/// `PostgresBlobStorage`, or an S3-compatible one) copies the blob into a local cache of whole
/// blobs first. Every method may block: callers run them on I/O worker threads, never on an event
/// loop or Swift's cooperative threads.
public protocol BlobStorage: Sendable {
    /// A new, empty temporary file for an upload (mode 0600), open for writing.
    func makeTemporaryFile() throws -> (path: String, descriptor: Int32)
    /// Makes a flushed temporary file the blob `sha256`; drops it when that blob exists already.
    func adopt(temporaryFile: String, sha256: String) throws
    /// The blob opened for reading, with its size; nil when it is not stored.
    func open(_ sha256: String) throws -> (descriptor: Int32, size: Int)?
    /// When the blob's file last changed; nil when it is not stored.
    func modified(_ sha256: String) throws -> Date?
    /// Every stored blob with its size and age, for garbage collection.
    func stored() throws -> [StoredBlob]
    /// Temporary files whose upload can no longer finish (their process is gone).
    func abandonedTemporaryFiles() throws -> [String]
    /// Removes a blob.
    func remove(_ sha256: String) throws
    /// Lets go of what the storage holds open (connections); called once, at shutdown.
    func close()
    /// Lines for `/metrics` in Prometheus' text format, each ending in a newline; may be empty.
    func metrics() -> String
}

extension BlobStorage {
    public func close() {}
    public func metrics() -> String { "" }
}

/// A blob in storage.
public struct StoredBlob: Sendable, Equatable {
    public let sha256: String
    public let size: Int
    public let modified: Date

    public init(sha256: String, size: Int, modified: Date) {
        self.sha256 = sha256
        self.size = size
        self.modified = modified
    }
}

/// ``BlobStorage`` in the data folder: `blobs/ab/cd/<sha256>`, temporary files in `blobs/tmp`.
public final class FileBlobStorage: BlobStorage {
    public let root: String
    private let counter = AtomicCounter()

    /// Uses (and creates, mode 0700) `blobs` under the data folder.
    public init(dataDirectory: String) throws {
        root = dataDirectory + "/blobs"
        try Self.makeDirectory(root)
        try Self.makeDirectory(root + "/tmp")
    }

    public func path(of sha256: String) -> String {
        let characters = Array(sha256)
        return "\(root)/\(String(characters[0..<2]))/\(String(characters[2..<4]))/\(sha256)"
    }

    /// Whether `text` is a SHA-256 in lowercase hex, as blobs are named.
    public static func isDigest(_ text: String) -> Bool {
        text.utf8.count == 64 && text.utf8.allSatisfy { (48...57).contains($0) || (97...102).contains($0) }
    }

    public func makeTemporaryFile() throws -> (path: String, descriptor: Int32) {
        // The pid in the name tells garbage collection whether the upload can still finish; the
        // machine's tag, whose pid it is when several machines share the folder.
        let path =
            "\(root)/tmp/\(getpid())-\(counter.next())-\(UInt32.random(in: 0...UInt32.max))-\(Self.machineTag)"
        let descriptor = Glibc.open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw Self.failure("create \(path)") }
        return (path, descriptor)
    }

    public func adopt(temporaryFile: String, sha256: String) throws {
        guard Self.isDigest(sha256) else { throw Self.failure("name a blob '\(sha256.prefix(80))'") }
        let target = path(of: sha256)
        if access(target, F_OK) == 0 {
            unlink(temporaryFile)
            return
        }
        let folder = (target as NSString).deletingLastPathComponent
        try Self.makeDirectory((folder as NSString).deletingLastPathComponent)
        try Self.makeDirectory(folder)
        guard rename(temporaryFile, target) == 0 else { throw Self.failure("move a blob into place") }
        // The rename is durable only once the folder is flushed.
        let descriptor = Glibc.open(folder, O_RDONLY | O_CLOEXEC)
        if descriptor >= 0 {
            fsync(descriptor)
            Glibc.close(descriptor)
        }
    }

    public func open(_ sha256: String) throws -> (descriptor: Int32, size: Int)? {
        guard Self.isDigest(sha256) else { return nil }
        let descriptor = Glibc.open(path(of: sha256), O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            if errno == ENOENT { return nil }
            throw Self.failure("open a blob")
        }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else {
            Glibc.close(descriptor)
            throw Self.failure("read a blob's size")
        }
        return (descriptor, Int(status.st_size))
    }

    public func modified(_ sha256: String) throws -> Date? {
        guard Self.isDigest(sha256) else { return nil }
        var status = stat()
        guard stat(path(of: sha256), &status) == 0 else {
            if errno == ENOENT { return nil }
            throw Self.failure("read a blob's age")
        }
        return Date(
            timeIntervalSince1970: TimeInterval(status.st_mtim.tv_sec) + TimeInterval(status.st_mtim.tv_nsec)
                / 1e9)
    }

    public func stored() throws -> [StoredBlob] {
        var blobs: [StoredBlob] = []
        let manager = FileManager.default
        for first in (try? manager.contentsOfDirectory(atPath: root)) ?? [] where first.count == 2 {
            for second in (try? manager.contentsOfDirectory(atPath: "\(root)/\(first)")) ?? [] {
                let folder = "\(root)/\(first)/\(second)"
                for name in (try? manager.contentsOfDirectory(atPath: folder)) ?? [] where Self.isDigest(name)
                {
                    let attributes = try? manager.attributesOfItem(atPath: "\(folder)/\(name)")
                    blobs.append(
                        StoredBlob(
                            sha256: name, size: (attributes?[.size] as? Int) ?? 0,
                            modified: (attributes?[.modificationDate] as? Date) ?? .distantPast))
                }
            }
        }
        return blobs
    }

    public func abandonedTemporaryFiles() throws -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: root + "/tmp")) ?? []
        return names.filter { name in
            let parts = name.split(separator: "-")
            guard let pid = Int32(parts.first ?? "") else { return true }
            if parts.count >= 4, parts[3] != Self.machineTag {
                // Another machine's (a shared folder): its pid means nothing here. An upload
                // writes as its bytes arrive, so one untouched for an hour is dead.
                var status = stat()
                guard stat("\(root)/tmp/\(name)", &status) == 0 else { return false }
                return Double(status.st_mtim.tv_sec) < Date().timeIntervalSince1970
                    - Self.foreignUploadIdleLimit
            }
            return pid != getpid() && kill(pid, 0) != 0 && errno == ESRCH
        }.map { root + "/tmp/" + $0 }
    }

    /// Seconds without a write after which another machine's temporary file is abandoned.
    static let foreignUploadIdleLimit: TimeInterval = 3600

    /// This machine in temporary files' names: its host name's FNV-1a hash, 8 hex digits (host
    /// names may hold '-', the names' separator).
    static let machineTag: String = {
        var name = [CChar](repeating: 0, count: 256)
        gethostname(&name, name.count - 1)
        var hash: UInt32 = 0x811C_9DC5
        for byte in String(cString: name).utf8 { hash = (hash ^ UInt32(byte)) &* 0x0100_0193 }
        return String(hash, radix: 16).leftPadded(to: 8)
    }()

    public func remove(_ sha256: String) throws {
        guard Self.isDigest(sha256) else { return }
        if unlink(path(of: sha256)) != 0 && errno != ENOENT { throw Self.failure("remove a blob") }
    }

    /// Creates a folder of the blob tree (mode 0700) unless it exists.
    public static func makeDirectory(_ path: String) throws {
        if mkdir(path, 0o700) != 0 && errno != EEXIST { throw failure("create a blob folder") }
    }

    /// The error for a failed file operation; a full disk is an ``OutOfSpaceError`` (507).
    public static func failure(_ what: String) -> any Error {
        let code = errno
        let detail = "could not \(what): \(String(cString: strerror(code)))"
        return OutOfSpaceError.isOutOfSpace(errno: code) ? OutOfSpaceError(detail) : StoreError.io(detail)
    }
}

/// A counter for unique temporary names.
final class AtomicCounter: Sendable {
    private let value = Mutex(0)

    func next() -> Int {
        value.withLock { value in
            value += 1
            return value
        }
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        String(repeating: "0", count: max(0, width - count)) + self
    }
}
