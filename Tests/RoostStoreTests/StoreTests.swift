import Foundation
import RoostQuery
import Testing

@testable import RoostSQLite
@testable import RoostStore

extension AccountCollections {
    /// Core's names (`AccountCollections.builtIn` there), which these tests cannot import.
    static let builtIn = AccountCollections(
        users: "FFUser", groups: "FFUserGroup", groupMembers: "users",
        userReferencePrefix: "/ff/resources/FFUser/")
}

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
        _ = try SQLiteObjectStore(directory: directory, collections: .builtIn)
        let reopened = try SQLiteObjectStore(directory: directory, collections: .builtIn)
        let versions = try reopened.database.read {
            try $0.query("SELECT version, name FROM roost_schema") { "\($0.integer(0)) \($0.text(1) ?? "")" }
        }
        #expect(
            versions == [
                "1 objects", "2 accounts", "3 objects by id", "4 access lists and group members",
                "5 idempotency keys", "6 blob references", "7 idempotency keys mark their write",
                "8 blob claims",
                "21 deactivation revokes tokens", "22 retired group guids", "23 session client addresses",
                "24 change log", "25 script outbox", "26 given-up script runs by sequence",
                "27 who deleted an object, in its change", "28 failed script runs keep who deleted",
                "29 object references", "30 push devices and outbox", "31 refresh tokens",
                "32 mail outbox and password resets", "33 sign-in identities",
                "34 e-mail verification and change",
            ])
        let mode = try reopened.database.read { try $0.first("PRAGMA journal_mode") { $0.text(0) } }
        #expect(mode == "wal")
    }

    // Inserts, versioned updates and deletes, concurrent writes and listing run on both backends
    // in Tests/RoostPostgresTests/PostgresStoreTests.swift.

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
