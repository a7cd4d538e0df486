import Foundation
import RoostQuery
import Testing

@testable import RoostStore

func temporaryDirectory() -> String {
    let path = NSTemporaryDirectory() + "roost-store-test-" + UUID().uuidString
    try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    return path
}

func object(_ collection: String, _ guid: String, createdAt: Int64 = 1, document: String? = nil)
    -> StoredObject
{
    StoredObject(
        collection: collection, guid: guid, document: Array((document ?? #"{"guid":"\#(guid)"}"#).utf8),
        createdBy: nil,
        createdAt: createdAt, updatedBy: nil, updatedAt: createdAt, version: 1)
}

struct Failure: Error {}

@Suite("SQLite store")
struct StoreTests {
    @Test("interpolated values become bound parameters")
    func interpolationBinds() {
        let hostile = "x'; DROP TABLE objects; --"
        let sql: SQL = "SELECT * FROM objects WHERE guid = \(hostile) AND version > \(3)"
        #expect(sql.text == "SELECT * FROM objects WHERE guid = ? AND version > ?")
        #expect(sql.arguments == [.text(hostile), .integer(3)])
    }

    @Test("migrations run once and are recorded")
    func migrations() throws {
        let directory = temporaryDirectory()
        _ = try SQLiteObjectStore(directory: directory)
        let reopened = try SQLiteObjectStore(directory: directory)
        let versions = try reopened.database.read {
            try $0.query("SELECT version, name FROM roost_schema") { "\($0.integer(0)) \($0.text(1) ?? "")" }
        }
        #expect(
            versions == [
                "1 objects", "2 accounts", "3 objects by id", "4 access lists and group members",
                "5 idempotency keys", "6 blob references", "7 idempotency keys mark their write",
                "8 blob claims",
                "21 deactivation revokes tokens", "22 retired group guids", "23 session client addresses",
                "24 change log",
            ])
        let mode = try reopened.database.read { try $0.first("PRAGMA journal_mode") { $0.text(0) } }
        #expect(mode == "wal")
    }

    @Test("insert, read back, refuse a duplicate guid")
    func insertAndRead() async throws {
        let store = try SQLiteObjectStore(directory: temporaryDirectory())
        let first = object("Post", "a", document: #"{"guid":"a","text":"hi"}"#)
        try await store.insert(first)
        #expect(try await store.object(in: "Post", guid: "a") == first)
        #expect(try await store.object(in: "Other", guid: "a") == nil)
        await #expect(throws: StoreError.duplicate) { try await store.insert(first) }
        try await store.insert(object("Other", "a"))
    }

    @Test("a failing write in a batch leaves the others committed")
    func groupCommitIsolation() async throws {
        let store = try SQLiteObjectStore(directory: temporaryDirectory())
        try await store.insert(object("Post", "taken"))
        try await withThrowingTaskGroup(of: Bool.self) { group in
            for index in 0..<200 {
                group.addTask {
                    do {
                        // Every tenth insert collides with an existing guid.
                        try await store.insert(object("Post", index % 10 == 0 ? "taken" : "g\(index)"))
                        return true
                    } catch StoreError.duplicate {
                        return false
                    }
                }
            }
            var succeeded = 0
            for try await ok in group where ok { succeeded += 1 }
            #expect(succeeded == 180)
        }
        let page = try await store.list(ListRequest(collection: "Post", count: 1000, includeTotal: true))
        #expect(page.total == 181)
    }

    @Test("update commits only at the expected version, and tells a lost race from a missing object")
    func updateAtExpectedVersion() async throws {
        let store = try SQLiteObjectStore(directory: temporaryDirectory())
        try await store.insert(object("Post", "a"))
        var next = object("Post", "a", document: #"{"guid":"a","v":2}"#)
        next.version = 2
        try await store.update(next, expectedVersion: 1)
        #expect(try await store.object(in: "Post", guid: "a") == next)
        var stale = next
        stale.document = Array(#"{"guid":"a","v":"stale"}"#.utf8)
        await #expect(throws: StoreError.versionChanged) { try await store.update(stale, expectedVersion: 1) }
        #expect(try await store.object(in: "Post", guid: "a") == next)
        await #expect(throws: StoreError.notFound) {
            try await store.update(object("Post", "zz"), expectedVersion: 1)
        }
    }

    @Test("delete commits only at the expected version, and reports a missing object")
    func delete() async throws {
        let store = try SQLiteObjectStore(directory: temporaryDirectory())
        try await store.insert(object("Post", "a"))
        await #expect(throws: StoreError.versionChanged) {
            try await store.delete(in: "Post", guid: "a", expectedVersion: 2)
        }
        #expect(try await store.object(in: "Post", guid: "a") != nil)
        try await store.delete(in: "Post", guid: "a", expectedVersion: 1)
        #expect(try await store.object(in: "Post", guid: "a") == nil)
        await #expect(throws: StoreError.notFound) {
            try await store.delete(in: "Post", guid: "a", expectedVersion: 1)
        }
    }

    @Test("list sorts by metadata or JSON fields, pages, and counts only on request")
    func listing() async throws {
        let store = try SQLiteObjectStore(directory: temporaryDirectory())
        for (index, name) in ["carol", "alice", "bob", "dave"].enumerated() {
            try await store.insert(
                object(
                    "User", "u\(index)", createdAt: Int64(10 - index),
                    document: #"{"name":"\#(name)","n":\#(index)}"#))
        }
        func names(_ request: ListRequest) async throws -> [String] {
            try await store.list(request).documents.map { document in
                let json = try JSONSerialization.jsonObject(with: Data(document)) as! [String: Any]
                return json["name"] as! String
            }
        }
        #expect(try await names(ListRequest(collection: "User")) == ["carol", "alice", "bob", "dave"])
        #expect(
            try await names(
                ListRequest(collection: "User", sort: [SortKey(field: FieldPath("name")!, descending: false)])
            ) == ["alice", "bob", "carol", "dave"])
        #expect(
            try await names(
                ListRequest(
                    collection: "User", sort: [SortKey(field: FieldPath("createdAt")!, descending: false)]))
                == ["dave", "bob", "alice", "carol"])
        #expect(
            try await names(
                ListRequest(
                    collection: "User", sort: [SortKey(field: FieldPath("n")!, descending: true)], start: 1,
                    count: 2)) == ["bob", "alice"])
        #expect(try await store.list(ListRequest(collection: "User")).total == nil)
        #expect(try await store.list(ListRequest(collection: "User", includeTotal: true)).total == 4)
        #expect(try await store.list(ListRequest(collection: "Nobody", includeTotal: true)).total == 0)
    }

    @Test(
        "field paths accept identifiers only",
        arguments: [
            ("a", true), ("a.b_c.d1", true), ("", false), ("a..b", false), ("1a", false), ("a-b", false),
            ("a'b", false), ("$.a", false),
        ])
    func fieldPaths(_ text: String, valid: Bool) {
        #expect((FieldPath(text) != nil) == valid)
    }
}
