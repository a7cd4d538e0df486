import Foundation
import Testing

@testable import RoostClient

/// The queue file and the cache folder, on their own.
@Suite struct LocalStorageTests {
    let folder = NSTemporaryDirectory() + "roost-storage-" + UUID().uuidString

    init() throws {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    }

    func operation(_ log: OperationLog, _ text: String) -> QueuedOperation {
        QueuedOperation(
            id: UUID().uuidString, sequence: log.takeSequence(), kind: .create, collection: "Note",
            guid: text,
            expectedVersion: nil, body: Data(#"{"text":"\#(text)"}"#.utf8), owner: nil, queuedAt: Date(),
            attempts: 0)
    }

    @Test func theQueueSurvivesReopeningAndKeepsItsOrder() throws {
        let path = folder + "/queue.log"
        let log = try OperationLog(path: path)
        let a = operation(log, "a")
        let b = operation(log, "b")
        let c = operation(log, "c")
        for op in [a, b, c] { try log.store(op) }
        try log.remove(b.id)
        var rebased = c
        rebased.expectedVersion = 5
        try log.store(rebased)
        let reopened = try OperationLog(path: path)
        #expect(reopened.operations.map(\.guid) == ["a", "c"])
        #expect(reopened.operations.last?.expectedVersion == 5)
        #expect(reopened.takeSequence() == c.sequence + 1)
        // Reopening rewrote the file with the pending writes only.
        let lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n")
        #expect(lines.count == 2)
    }

    @Test func aLargeBodyLivesInAFileOfItsOwn() throws {
        let path = folder + "/queue.log"
        let log = try OperationLog(path: path)
        let big = Data((0..<100_000).map { UInt8(truncatingIfNeeded: $0) })
        let upload = QueuedOperation(
            id: "upload-1", sequence: log.takeSequence(), kind: .upload, collection: "Photo", guid: "p1",
            expectedVersion: nil, body: big, owner: nil, queuedAt: Date(), attempts: 0)
        let stored = try log.add(upload)
        #expect(stored.body == nil)
        #expect(stored.bodyFile == "upload-1")
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)).count < 2000, "the log holds no bytes of it")
        let file = folder + "/queue-bodies/upload-1"
        #expect((try FileManager.default.attributesOfItem(atPath: file)[.posixPermissions] as? Int) == 0o600)
        let small = try log.add(operation(log, "small"))
        #expect(small.body != nil && small.bodyFile == nil)

        // A file no operation names (a crash between writing it and logging) goes at the next open.
        try Data("orphan".utf8).write(to: URL(fileURLWithPath: folder + "/queue-bodies/orphan"))
        let reopened = try OperationLog(path: path)
        #expect(reopened.body(of: reopened.operations[0]) == big)
        #expect(!FileManager.default.fileExists(atPath: folder + "/queue-bodies/orphan"))
        try reopened.remove("upload-1")
        #expect(!FileManager.default.fileExists(atPath: file))
        #expect(reopened.operations.map(\.guid) == ["small"])
    }

    @Test func aLineCutShortByACrashIsSkipped() throws {
        let path = folder + "/queue.log"
        let log = try OperationLog(path: path)
        try log.store(operation(log, "kept"))
        let torn = try JSONEncoder().encode(["put": operation(log, "torn")])
        let handle = try #require(FileHandle(forWritingAtPath: path))
        handle.seekToEndOfFile()
        handle.write(torn.prefix(torn.count / 2))
        try handle.close()
        let reopened = try OperationLog(path: path)
        #expect(reopened.operations.map(\.guid) == ["kept"])
        try reopened.store(operation(reopened, "after"))
        #expect(try OperationLog(path: path).operations.map(\.guid) == ["kept", "after"])
    }

    @Test func anEmptyQueueLeavesAnEmptyFile() throws {
        let path = folder + "/queue.log"
        let log = try OperationLog(path: path)
        let op = operation(log, "a")
        try log.store(op)
        try log.remove(op.id)
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)).isEmpty)
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
    }

    @Test func theCacheEvictsTheLeastRecentlyUsed() throws {
        let cache = try ResponseCache(folder: folder + "/cache", limit: 3000)
        let body = Data(repeating: UInt8(ascii: "x"), count: 900)
        for path in ["/a", "/b", "/c"] { cache.store(.init(etag: "\"1\"", body: body), for: path) }
        #expect(cache.entry(for: "/a")?.body == body)  // now /b is the oldest
        cache.store(.init(etag: nil, body: body), for: "/d")
        #expect(cache.entry(for: "/b") == nil)
        #expect(cache.entry(for: "/a")?.etag == "\"1\"")
        #expect(cache.entry(for: "/c") != nil)
        #expect(cache.entry(for: "/d")?.etag == nil)
        #expect(cache.totalBytes <= 3000)
        // Too big for the cache at all: not stored, nothing evicted.
        cache.store(.init(etag: nil, body: Data(count: 5000)), for: "/huge")
        #expect(cache.entry(for: "/huge") == nil)
        #expect(cache.entry(for: "/c") != nil)
        // A reopened cache knows its files.
        let reopened = try ResponseCache(folder: folder + "/cache", limit: 3000)
        #expect(reopened.totalBytes == cache.totalBytes)
        reopened.removeAll()
        #expect(reopened.entry(for: "/a") == nil)
        #expect(reopened.totalBytes == 0)
    }

    @Test func aCacheFileOfAnotherPathIsAMiss() throws {
        let cache = try ResponseCache(folder: folder + "/cache", limit: 10_000)
        cache.store(.init(etag: nil, body: Data("a".utf8)), for: "/a")
        let name = ResponseCache.fileName(for: "/a")
        let other = ResponseCache.fileName(for: "/b")
        try FileManager.default.moveItem(
            atPath: folder + "/cache/" + name, toPath: folder + "/cache/" + other)
        #expect(cache.entry(for: "/b") == nil)
    }

    @Test func theCredentialFileIsTheOwnersOnlyAndHoldsNoPassword() throws {
        let store = FileCredentialStore(path: folder + "/credential.json")
        try store.save(Credential(token: "t0k", userGuid: "g", userName: "alice"))
        #expect(try store.load() == Credential(token: "t0k", userGuid: "g", userName: "alice"))
        let attributes = try FileManager.default.attributesOfItem(atPath: store.path)
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
        try Data("garbage".utf8).write(to: URL(fileURLWithPath: store.path))
        #expect(try store.load() == nil)
        try store.clear()
        #expect(!FileManager.default.fileExists(atPath: store.path))
    }
}
