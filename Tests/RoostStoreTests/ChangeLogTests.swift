import Foundation
import Synchronization
import Testing

@testable import RoostSQLite
@testable import RoostStore

@Suite("Change log")
struct ChangeLogTests {
    @Test(
        "create, update and delete each append one entry in their own transaction, with the object before and after"
    )
    func everyWriteIsLogged() async throws {
        let storage = try SQLiteStorage(directory: temporaryDirectory(), collections: .builtIn)
        let created = object("Post", "a", document: #"{"guid":"a","n":1}"#)
        try await storage.objects.insert(created)
        var updated = created
        updated.document = Array(#"{"guid":"a","n":2}"#.utf8)
        updated.version = 2
        updated.acl = Array(#"{"readUsers":["u"]}"#.utf8)
        try await storage.objects.update(updated, expectedVersion: 1)
        // A write that fails leaves no entry.
        await #expect(throws: StoreError.versionChanged) {
            try await storage.objects.update(updated, expectedVersion: 1)
        }
        try await storage.objects.delete(in: "Post", guid: "a", expectedVersion: 2)
        let changes = try await storage.changes.changes(after: 0, limit: 10, maxBytes: 1 << 20)
        #expect(changes.map(\.operation) == [.create, .update, .delete])
        #expect(changes.map(\.sequence) == [1, 2, 3])
        #expect(changes.map(\.version) == [1, 2, 2])
        #expect(changes[0].document == created.document && changes[0].previousDocument == nil)
        #expect(changes[1].previousDocument == created.document && changes[1].document == updated.document)
        #expect(changes[1].acl == updated.acl && changes[1].previousACL == nil)
        #expect(changes[2].document == nil && changes[2].previousDocument == updated.document)
        #expect(changes[2].previousACL == updated.acl)
        #expect(
            try await storage.changes.changes(after: 2, limit: 10, maxBytes: 1 << 20).map(\.sequence) == [3])
        #expect(try await storage.changes.window() == ChangeWindow(trimmedThrough: 0, last: 3))
        // A read stops once its documents reach the byte budget; the first entry always comes.
        #expect(try await storage.changes.changes(after: 0, limit: 10, maxBytes: 1).map(\.sequence) == [1])
        #expect(
            try await storage.changes.changes(after: 0, limit: 10, maxBytes: 100).map(\.sequence) == [1, 2])
        await storage.database.close()
    }

    @Test("a deleted token is logged as a revocation")
    func tokenRevocationIsLogged() async throws {
        let storage = try SQLiteStorage(directory: temporaryDirectory(), collections: .builtIn)
        try await storage.accounts.createAccount(
            AccountRecord(userGuid: "u1", userNameKey: "ann", emailKey: nil, passwordHash: "x"),
            user: object("FFUser", "u1"))
        try await storage.accounts.issue(
            TokenRecord(
                id: "t1", userGuid: "u1", secretHash: [1], deviceId: "d", deviceType: nil, createdAt: 1,
                expiresAt: 2, renewedAt: 1),
            revoking: .none, manufacturerId: nil)
        #expect(try await storage.accounts.deleteToken(id: "t1"))
        let last = try #require(
            try await storage.changes.changes(after: 0, limit: 10, maxBytes: 1 << 20).last)
        #expect(last.operation == .revoke && last.guid == "t1" && last.collection == "")
        await storage.database.close()
    }

    @Test("trimming removes the oldest entries outside the window, in batches, and keeps the newest")
    func trimming() async throws {
        let storage = try SQLiteStorage(directory: temporaryDirectory(), collections: .builtIn)
        // Before the writes: under the whole suite's load they may take longer than the window.
        let start = Int64(Date().timeIntervalSince1970 * 1000)
        for index in 0..<10 { try await storage.objects.insert(object("Post", "g\(index)")) }
        let later = start + 3_600_000
        let retention = ChangeRetention(age: .seconds(60), entries: 3)
        // Young entries stay, however many.
        #expect(try await storage.changes.trim(retention, now: start, batch: 100) == 0)
        #expect(try await storage.changes.trim(retention, now: later, batch: 4) == 4)
        #expect(try await storage.changes.trim(retention, now: later, batch: 4) == 3)
        #expect(try await storage.changes.trim(retention, now: later, batch: 4) == 0)
        let window = try await storage.changes.window()
        #expect(window == ChangeWindow(trimmedThrough: 7, last: 10))
        #expect(window.canResume(after: 7) && window.canResume(after: 10))
        #expect(!window.canResume(after: 6) && !window.canResume(after: 11))
        // Sequence numbers keep growing after a trim.
        try await storage.objects.insert(object("Post", "next"))
        #expect(
            try await storage.changes.changes(after: 10, limit: 5, maxBytes: 1 << 20).map(\.sequence) == [11])
        await storage.database.close()
    }

    @Test("the store tells observers after each commit")
    func commitsAreObserved() async throws {
        let storage = try SQLiteStorage(directory: temporaryDirectory(), collections: .builtIn)
        let commits = Counter()
        storage.changes.observeCommits { commits.increment() }
        try await storage.objects.insert(object("Post", "a"))
        #expect(commits.value >= 1)
        await storage.database.close()
    }
}

final class Counter: Sendable {
    private let count = Mutex(0)
    func increment() { count.withLock { $0 += 1 } }
    var value: Int { count.withLock { $0 } }
}
