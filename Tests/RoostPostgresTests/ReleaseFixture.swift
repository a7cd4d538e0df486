import Foundation
import RoostQuery
import RoostStore
import Testing

/// A database as a release leaves it: one of everything the stores keep, written through the
/// stores, and what must still be there after an upgrade. `Fixtures/` holds the dumps of it
/// that release 0.1.0 (SQLite schema version 28, PostgreSQL 72) made, written by
/// ``UpgradeFromReleaseTests/writeFixtures()``.
enum ReleaseFixture {
    static let user = #"{"guid":"u1","userName":"ann","admin":false,"n":1.50}"#
    static let post =
        #"{"guid":"p1","title":"hello","author":{"ffUrl":"/ff/resources/FFUser/u1"},"photo":{"blob":{"sha256":"abc123"},"contentType":"image/png"},"nested":{"owner":{"ffUrl":"/ff/resources/FFUser/u1"}}}"#
    static let group = #"{"guid":"g1","users":[{"ffUrl":"/ff/resources/FFUser/u1"},"u2"]}"#
    static let response = RecordedResponse(status: 201, headers: [("ETag", "\"1\"")], body: Array("{}".utf8))

    static func populate(_ storage: any Storage) async throws {
        try await storage.accountStore.createAccount(
            AccountRecord(
                userGuid: "u1", userNameKey: "ann", emailKey: "ann@example.com", passwordHash: "$argon2id$x"),
            user: object("FFUser", "u1", document: user))
        try await storage.accountStore.issue(
            TokenRecord(
                id: "t1", userGuid: "u1", secretHash: [1, 2, 3], deviceId: "phone", deviceType: "ios",
                createdAt: 10, expiresAt: 4_000_000_000_000, renewedAt: 10, clientAddress: "192.0.2.1"),
            revoking: .none, manufacturerId: "m1")
        try await storage.objectStore.insert(object("FFUserGroup", "g1", createdBy: "u1", document: group))
        try await storage.objectStore.insert(
            object(
                "Post", "p1", createdAt: 20, createdBy: "u1", document: post, acl: #"{"readUsers":["u1"]}"#))
        try await storage.objectStore.insert(
            object("Post", "p2", createdAt: 30, document: #"{"guid":"p2","v":1}"#))
        var updated = object("Post", "p2", createdAt: 30, document: #"{"guid":"p2","v":2}"#)
        updated.version = 2
        try await storage.objectStore.update(updated, expectedVersion: 1)
        try await storage.objectStore.insert(object("Post", "p3", document: #"{"guid":"p3"}"#))
        try await storage.objectStore.delete(
            in: "Post", guid: "p3", expectedVersion: 1, marking: nil, by: "u1")
        try await storage.objectStore.createIndex(collection: "Post", field: FieldPath("title")!)
        _ = try await storage.idempotencyStore.reserve(
            scope: "u1", key: "k1", fingerprint: [9], now: 40, expiredBefore: 0, abandonedBefore: 0)
        try await storage.idempotencyStore.complete(scope: "u1", key: "k1", response: response)
        try await storage.scriptOutbox.setSubscriptions([
            OutboxSubscription(handler: "notify", collection: "Post", operation: .create)
        ])
        try await storage.loginFailures.recordFailure(of: ["account:ann"], at: 50, droppingThrough: 0)
        _ = try await storage.sharedDefinitions?.storeDefinition(Array(#"{"collections":{}}"#.utf8), at: 60)
    }

    /// Everything ``populate(_:)`` wrote, read through this build's stores.
    static func verify(_ storage: any Storage, backend: Backend) async throws {
        let objects = storage.objectStore
        #expect(try await objects.object(in: "FFUser", guid: "u1")?.document == Array(user.utf8))
        let stored = try #require(try await objects.object(in: "Post", guid: "p1"))
        #expect(stored.document == Array(post.utf8) && stored.createdBy == "u1" && stored.createdAt == 20)
        #expect(stored.acl == Array(#"{"readUsers":["u1"]}"#.utf8))
        #expect(try await objects.object(in: "Post", guid: "p2")?.version == 2)
        #expect(try await objects.object(in: "Post", guid: "p3") == nil)
        // Derived rows: group members, blob references, and references a query follows.
        #expect(try await objects.accessFacts(userGuid: "u1")?.groups == ["g1"])
        #expect(try await objects.referencedBlobs() == ["abc123"])
        #expect(try await objects.referenceCount(of: "abc123") == 1)
        for query in ["author.userName eq 'ann'", "nested.owner.userName eq 'ann'", "title eq 'hello'"] {
            var request = ListRequest(collection: "Post", filter: try QueryParser.parse(query))
            request.references = .unrestricted
            #expect(try await objects.list(request).documents == [Array(post.utf8)], "\(query)")
        }
        #expect(try await objects.fieldIndexes().map(\.name) == ["field:Post:title"])
        // Accounts and sessions.
        #expect(try await storage.accountStore.account(identifiedBy: "ann@example.com")?.userGuid == "u1")
        let token = try #require(try await storage.accountStore.token(secretHash: [1, 2, 3]))
        #expect(token.id == "t1" && token.deviceId == "phone" && token.clientAddress == "192.0.2.1")
        #expect(
            try await storage.idempotencyStore.reserve(
                scope: "u1", key: "k1", fingerprint: [9], now: 41, expiredBefore: 0, abandonedBefore: 0)
                == .completed(response))
        // The log and the outbox: the cursor started at the log's end.
        let changes = try await storage.changeLog.changes(after: 0, limit: 100, maxBytes: 1 << 20)
        #expect(
            changes.map { "\($0.operation.rawValue) \($0.collection)/\($0.guid)" } == [
                "create FFUser/u1", "create FFUserGroup/g1", "create Post/p1", "create Post/p2",
                "update Post/p2",
                "create Post/p3", "delete Post/p3",
            ])
        #expect(changes.last?.deletedBy == "u1")
        #expect(try await storage.changeLog.window().last == 7)
        #expect(
            try await storage.scriptOutbox.subscriptions() == [
                OutboxSubscription(handler: "notify", collection: "Post", operation: .create)
            ])
        if backend == .postgres {
            #expect(
                try await storage.loginFailures.failures(of: ["account:ann"], after: 0) == [
                    "account:ann": [50]
                ])
            #expect(try await storage.sharedDefinitions?.storedDefinition()?.revision == 1)
        }
        // And it still takes writes.
        try await objects.insert(object("Post", "after-upgrade"))
        #expect(try await storage.changeLog.window().last == 8)
    }
}
