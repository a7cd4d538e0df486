import Foundation
import RoostStore
import Testing

/// The change log and the login throttle's failures, held to one contract on both backends (the
/// other stores' contracts: the object, account, derived-row and outbox suites).
@Suite("Change log and login failures on both backends")
struct StoreContractTests {
    @Test(
        "create, update and delete each append one entry, with the object before and after; reads keep to their byte budget",
        arguments: Backend.allCases)
    func everyWriteIsLogged(_ backend: Backend) async throws {
        try await withStorage(backend) { storage in
            let (objects, log) = (storage.objectStore, storage.changeLog)
            let created = object("Post", "a", document: #"{"guid":"a","n":1}"#)
            try await objects.insert(created)
            var updated = created
            updated.document = Array(#"{"guid":"a","n":2}"#.utf8)
            updated.version = 2
            updated.acl = Array(#"{"readUsers":["u"]}"#.utf8)
            try await objects.update(updated, expectedVersion: 1)
            // A write that fails leaves no entry.
            await #expect(throws: StoreError.versionChanged) {
                try await objects.update(updated, expectedVersion: 1)
            }
            try await objects.delete(in: "Post", guid: "a", expectedVersion: 2, marking: nil, by: "deleter")
            let changes = try await log.changes(after: 0, limit: 10, maxBytes: 1 << 20)
            #expect(changes.map(\.operation) == [.create, .update, .delete])
            #expect(changes.map(\.sequence) == [1, 2, 3])
            #expect(changes.map(\.version) == [1, 2, 2])
            #expect(changes[0].document == created.document && changes[0].previousDocument == nil)
            #expect(
                changes[1].previousDocument == created.document && changes[1].document == updated.document)
            #expect(changes[1].acl == updated.acl && changes[1].previousACL == nil)
            #expect(changes[2].document == nil && changes[2].previousDocument == updated.document)
            #expect(changes[2].previousACL == updated.acl && changes[2].deletedBy == "deleter")
            #expect(try await log.changes(after: 2, limit: 10, maxBytes: 1 << 20).map(\.sequence) == [3])
            #expect(try await log.window() == ChangeWindow(trimmedThrough: 0, last: 3))
            // A read stops once its documents reach the byte budget; the first entry always comes.
            #expect(try await log.changes(after: 0, limit: 10, maxBytes: 1).map(\.sequence) == [1])
            #expect(try await log.changes(after: 0, limit: 10, maxBytes: 100).map(\.sequence) == [1, 2])
        }
    }

    @Test("a deleted token is logged as a revocation", arguments: Backend.allCases)
    func tokenRevocationIsLogged(_ backend: Backend) async throws {
        try await withStorage(backend) { storage in
            try await storage.accountStore.createAccount(
                AccountRecord(userGuid: "u1", userNameKey: "ann", emailKey: nil, passwordHash: "x"),
                user: object("FFUser", "u1"))
            try await storage.accountStore.issue(
                TokenRecord(
                    id: "t1", userGuid: "u1", secretHash: [1], deviceId: "d", deviceType: nil, createdAt: 1,
                    expiresAt: 2, renewedAt: 1),
                revoking: .none, manufacturerId: nil)
            #expect(try await storage.accountStore.deleteToken(id: "t1"))
            let last = try #require(
                try await storage.changeLog.changes(after: 0, limit: 10, maxBytes: 1 << 20).last)
            #expect(last.operation == .revoke && last.guid == "t1" && last.collection == "")
        }
    }

    @Test(
        "trimming removes the oldest entries outside the window, in batches; numbers keep growing",
        arguments: Backend.allCases)
    func trimming(_ backend: Backend) async throws {
        try await withStorage(backend) { storage in
            let log = storage.changeLog
            // Before the writes: under the whole suite's load they may take longer than the window.
            let start = Int64(Date().timeIntervalSince1970 * 1000)
            for index in 0..<10 { try await storage.objectStore.insert(object("Post", "g\(index)")) }
            let later = start + 3_600_000
            let retention = ChangeRetention(age: .seconds(60), entries: 3)
            #expect(try await log.trim(retention, now: start, batch: 100) == 0)
            #expect(try await log.trim(retention, now: later, batch: 4) == 4)
            #expect(try await log.trim(retention, now: later, batch: 4) == 3)
            #expect(try await log.trim(retention, now: later, batch: 4) == 0)
            #expect(try await log.window() == ChangeWindow(trimmedThrough: 7, last: 10))
            try await storage.objectStore.insert(object("Post", "next"))
            #expect(try await log.changes(after: 10, limit: 5, maxBytes: 1 << 20).map(\.sequence) == [11])
        }
    }

    @Test("failed logins are counted per key, dropped once old, and forgotten", arguments: Backend.allCases)
    func loginFailures(_ backend: Backend) async throws {
        try await withStorage(backend) { storage in
            let failures = storage.loginFailures
            try await failures.recordFailure(of: ["account:a", "address:1"], at: 100, droppingThrough: 0)
            try await failures.recordFailure(of: ["account:a"], at: 200, droppingThrough: 0)
            #expect(
                try await failures.failures(of: ["account:a", "address:1", "account:b"], after: 0)
                    == ["account:a": [100, 200], "address:1": [100]])
            #expect(
                try await failures.failures(of: ["account:a", "address:1"], after: 150) == [
                    "account:a": [200]
                ])
            // A new failure drops the times it no longer needs.
            try await failures.recordFailure(of: ["account:a"], at: 300, droppingThrough: 150)
            #expect(try await failures.failures(of: ["account:a"], after: 0) == ["account:a": [200, 300]])
            try await failures.forget("account:a")
            #expect(
                try await failures.failures(of: ["account:a", "address:1"], after: 0) == ["address:1": [100]])
            #expect(try await failures.failures(of: [], after: 0) == [:])
        }
    }
}
