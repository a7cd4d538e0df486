import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The offline queue on disk: an append-only file of JSON lines, each flushed to disk before the
/// call that wrote it returns.
///
/// A line either stores an operation (`{"put": …}`, a later one with the same id replaces it)
/// or marks one done (`{"done": id}`). A crash can only cut the last line short; loading skips
/// a line that does not parse, and rewrites the file without finished operations.
final class OperationLog {
    private struct Record: Codable {
        var put: QueuedOperation?
        var done: String?
    }

    let path: String
    /// Where bodies over ``inlineBodyLimit`` bytes are kept, one file per operation.
    let bodyFolder: String
    static let inlineBodyLimit = 64 * 1024
    private var descriptor: Int32 = -1
    /// Pending operations, in queue order.
    private(set) var operations: [QueuedOperation] = []
    private(set) var nextSequence: Int64 = 1

    init(path: String) throws {
        self.path = path
        bodyFolder = (path as NSString).deletingLastPathComponent + "/queue-bodies"
        var pending: [String: QueuedOperation] = [:]
        var lineCount = 0
        if let data = FileManager.default.contents(atPath: path) {
            for line in data.split(separator: UInt8(ascii: "\n")) {
                lineCount += 1
                guard let record = try? JSONDecoder().decode(Record.self, from: Data(line)) else { continue }
                if let operation = record.put { pending[operation.id] = operation }
                if let id = record.done { pending[id] = nil }
            }
        }
        operations = pending.values.sorted { $0.sequence < $1.sequence }
        nextSequence = (operations.last?.sequence ?? 0) + 1
        if lineCount != operations.count || !FileManager.default.fileExists(atPath: path) {
            try compact()
        }
        try openForAppending()
        try removeUnusedBodies()
    }

    deinit {
        if descriptor >= 0 { close(descriptor) }
    }

    /// Takes the next queue position.
    func takeSequence() -> Int64 {
        defer { nextSequence += 1 }
        return nextSequence
    }

    /// Adds or replaces an operation; returns once it is on disk.
    func store(_ operation: QueuedOperation) throws {
        try append(Record(put: operation))
        if let index = operations.firstIndex(where: { $0.id == operation.id }) {
            operations[index] = operation
        } else {
            operations.append(operation)
            operations.sort { $0.sequence < $1.sequence }
        }
    }

    /// Stores a new operation, moving a large body to a file of its own first; returns the
    /// operation as stored.
    func add(_ operation: QueuedOperation) throws -> QueuedOperation {
        var stored = operation
        if let body = operation.body, body.count > Self.inlineBodyLimit {
            try FileSystem.makeFolder(bodyFolder)
            try FileSystem.writeAtomically(body, to: bodyFolder + "/" + operation.id)
            stored.body = nil
            stored.bodyFile = operation.id
        }
        try store(stored)
        return stored
    }

    /// Stores a new upload whose bytes are in `file`, copied beside the queue first (streamed by
    /// the file system, never whole in memory).
    func add(_ operation: QueuedOperation, copying file: URL) throws -> QueuedOperation {
        var stored = operation
        try FileSystem.makeFolder(bodyFolder)
        let copy = bodyFolder + "/" + operation.id
        try? FileManager.default.removeItem(atPath: copy)
        try FileManager.default.copyItem(atPath: file.path, toPath: copy)
        stored.body = nil
        stored.bodyFile = operation.id
        try store(stored)
        return stored
    }

    /// The file holding an operation's body, when it is kept in one.
    func bodyFileURL(of operation: QueuedOperation) -> URL? {
        operation.bodyFile.map { URL(fileURLWithPath: bodyFolder + "/" + $0) }
    }

    /// An operation's body, from the log or its file.
    func body(of operation: QueuedOperation) -> Data? {
        if let body = operation.body { return body }
        return operation.bodyFile.flatMap { FileManager.default.contents(atPath: bodyFolder + "/" + $0) }
    }

    /// Marks an operation finished; the file is emptied once nothing is pending.
    func remove(_ id: String) throws {
        try append(Record(done: id))
        if let file = operations.first(where: { $0.id == id })?.bodyFile {
            try? FileManager.default.removeItem(atPath: bodyFolder + "/" + file)
        }
        operations.removeAll { $0.id == id }
        if operations.isEmpty { try compact() }
    }

    /// Forgets every pending operation (logout of the owner is not a reason; an explicit purge is).
    func removeAll() throws {
        operations = []
        try compact()
        try removeUnusedBodies()
    }

    /// Body files no pending operation names: left by a crash between writing one and logging
    /// its operation, or between logging a finish and removing the file.
    private func removeUnusedBodies() throws {
        let used = Set(operations.compactMap(\.bodyFile))
        for name in (try? FileManager.default.contentsOfDirectory(atPath: bodyFolder)) ?? []
        where !used.contains(name) {
            try? FileManager.default.removeItem(atPath: bodyFolder + "/" + name)
        }
    }

    private func append(_ record: Record) throws {
        var line = try JSONEncoder().encode(record)
        line.append(UInt8(ascii: "\n"))
        try FileSystem.writeAll(line, to: descriptor)
        guard fsync(descriptor) == 0 else { throw FileSystem.posixError("flush the offline queue") }
    }

    /// Rewrites the file with only the pending operations.
    private func compact() throws {
        var data = Data()
        for operation in operations {
            data.append(try JSONEncoder().encode(Record(put: operation)))
            data.append(UInt8(ascii: "\n"))
        }
        try FileSystem.writeAtomically(data, to: path)
        if descriptor >= 0 {
            close(descriptor)
            try openForAppending()
        }
    }

    private func openForAppending() throws {
        descriptor = open(path, O_WRONLY | O_APPEND | O_CREAT, 0o600)
        guard descriptor >= 0 else { throw FileSystem.posixError("open the offline queue at \(path)") }
    }
}
