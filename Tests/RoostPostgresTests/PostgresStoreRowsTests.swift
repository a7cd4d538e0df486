import Foundation
import RoostCore
import RoostQuery
import RoostStore
import RoostTestSupport
import Testing

@testable import RoostPostgres

/// Group members, blob references and claims, field indexes and access facts, on both backends.
@Suite("Derived rows on both backends")
struct PostgresStoreRowsTests {
    @Test(
        "writes keep group members and blob references in step, and a delete clears them",
        arguments: Backend.allCases)
    func rowsFollowWrites(_ backend: Backend) async throws {
        try await withStorage(backend) { storage in
            let store = storage.objectStore
            try await store.insert(object("FFUser", "u2", document: #"{"guid":"u2"}"#))
            try await store.insert(
                object("FFUser", "u3", document: #"{"guid":"u3","admin":true,"active":false}"#))
            var group = object(
                "FFUserGroup", "g",
                document:
                    #"{"guid":"g","users":["u1",{"ffUrl":"/ff/resources/FFUser/u2"}],"p":{"blob":{"sha256":"s"}}}"#
            )
            try await store.insert(group)
            #expect(
                try await store.accessFacts(userGuid: "u2")
                    == UserAccessFacts(isAdmin: false, isActive: true, groups: ["g"]))
            #expect(try await store.referenceCount(of: "s") == 1)
            #expect(try await store.referencedBlobs() == ["s"])
            group.document = Array(#"{"guid":"g","users":["u2","u3"]}"#.utf8)
            group.version = 2
            try await store.update(group, expectedVersion: 1)
            #expect(
                try await store.accessFacts(userGuid: "u3")
                    == UserAccessFacts(isAdmin: true, isActive: false, groups: ["g"]))
            #expect(try await store.referenceCount(of: "s") == 0)
            try await store.delete(in: "FFUserGroup", guid: "g", expectedVersion: 2)
            #expect(try await store.accessFacts(userGuid: "u2")?.groups == [])
            #expect(try await store.accessFacts(userGuid: "nobody") == nil)
        }
    }

    @Test("unused blobs go; referenced, freshly claimed and changed ones stay", arguments: Backend.allCases)
    func blobCollection(_ backend: Backend) async throws {
        try await withStorage(backend) { storage in
            let store = storage.objectStore
            let directory = NSTemporaryDirectory() + "roost-pg-blobs-" + UUID().uuidString
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let blobs = try FileBlobStorage(dataDirectory: directory)
            func digest(_ index: Int) -> String { String(repeating: String(index), count: 64) }
            for index in 1...3 {
                let (path, descriptor) = try blobs.makeTemporaryFile()
                close(descriptor)
                try blobs.adopt(temporaryFile: path, sha256: digest(index))
            }
            try await store.insert(
                object("Post", "p", document: #"{"guid":"p","photo":{"blob":{"sha256":"\#(digest(1))"}}}"#))
            let now = Date()
            try await store.claimBlob(digest(2), at: Int64(now.timeIntervalSince1970 * 1000) + 90_000)
            let removed = try await store.removeUnusedBlobs(
                [digest(1), digest(2), digest(3)], unusedSince: now.addingTimeInterval(60), from: blobs)
            #expect(removed == [digest(3)])
            try await store.forgetBlobClaims(madeBefore: now.addingTimeInterval(120))
            let later = try await store.removeUnusedBlobs(
                [digest(2)], unusedSince: now.addingTimeInterval(60), from: blobs)
            #expect(later == [digest(2)])
            #expect(try blobs.modified(digest(1)) != nil)
        }
    }

    @Test("field indexes are created once, listed by name and dropped", arguments: Backend.allCases)
    func fieldIndexes(_ backend: Backend) async throws {
        try await withStorage(backend) { storage in
            let store = storage.objectStore
            let long = FieldPath("a_field_name_long_enough.to_pass_the_sixty_three_bytes.postgres_keeps")!
            try await store.createIndex(collection: "Post", field: FieldPath("title")!)
            try await store.createIndex(collection: "Post", field: FieldPath("title")!)
            try await store.createIndex(collection: "Post", field: long)
            let names = try await store.fieldIndexes().map(\.name)
            #expect(names == ["field:Post:\(long)", "field:Post:title"])
            try await store.insert(object("Post", "a", document: #"{"guid":"a","title":"x"}"#))
            let found = try await store.list(
                ListRequest(collection: "Post", filter: .comparison(FieldPath("title")!, .eq, .string("x"))))
            #expect(found.documents.count == 1)
            #expect(try await store.dropIndex(collection: "Post", field: FieldPath("title")!))
            #expect(try await store.dropIndex(collection: "Post", field: FieldPath("title")!) == false)
            #expect(try await store.fieldIndexes().map(\.field) == [long.description])
        }
    }

    @Test("a field index serves the compiled equality and range on its field (the expressions match)")
    func fieldIndexIsUsed() async throws {
        try await withPostgresStorage { storage in
            try await storage.objects.createIndex(collection: "Post", field: FieldPath("author.name")!)
            for index in 0..<300 {
                try await storage.objects.insert(
                    object(
                        "Post", "p\(index)",
                        document: #"{"guid":"p\#(index)","author":{"name":"n\#(index)"}}"#))
            }
            func plan(_ comparison: ComparisonOperator, _ name: String) async throws -> String {
                let condition = try PostgresObjectStore.condition(
                    "Post", .comparison(FieldPath("author.name")!, comparison, .string(name)))
                return try await storage.database.write { connection in
                    // A small table: without this the planner rightly prefers a scan.
                    try connection.execute("ANALYZE objects; SET LOCAL enable_seqscan = off")
                    return try connection.query("EXPLAIN SELECT document FROM objects WHERE " + condition) {
                        $0.text(0) ?? ""
                    }.joined(separator: "\n")
                }
            }
            let equality = try await plan(.eq, "n1")
            #expect(equality.contains("field:Post:author.name"), "\(equality)")
            let range = try await plan(.gte, "n98")
            #expect(range.contains("field:Post:author.name"), "\(range)")
        }
    }

    @Test("PostgreSQL records every migration in order, once")
    func migrationsRecorded() async throws {
        try await withPostgresStorage { storage in
            let versions = try await storage.database.read { connection in
                try connection.query("SELECT version, name FROM roost_schema ORDER BY version") {
                    "\($0.integer(0)) \($0.text(1) ?? "")"
                }
            }
            #expect(versions == PostgresStorage.migrations.map { "\($0.version) \($0.name)" })
            #expect(
                PostgresStorage.migrations.map(\.version)
                    == PostgresStorage.migrations.map(\.version).sorted())
            #expect(Set(PostgresStorage.migrations.map(\.version)).count == PostgresStorage.migrations.count)
        }
    }

    @Test("a database that is not UTF8 is refused at startup with a clear error")
    func refusesOtherEncodings() async throws {
        let server = try PostgresTestDatabase.serverConfiguration()
        let name = "roost_latin_" + String(UInt32.random(in: 0...UInt32.max))
        let admin = try PostgresDatabase(configuration: server, migrations: [])
        try await admin.read {
            try $0.execute("CREATE DATABASE \(name) TEMPLATE template0 ENCODING 'LATIN1' LOCALE 'C'")
        }
        #expect {
            _ = try PostgresStorage(
                configuration: server.replacingDatabase(with: name), collections: .builtIn)
        } throws: { error in
            "\(error)".contains("Roost needs a database with UTF8 encoding, not LATIN1")
        }
        try await admin.read { try $0.execute("DROP DATABASE IF EXISTS \(name)") }
        await admin.close()
    }

    @Test("values in queries are bound parameters, never spliced into the SQL")
    func valuesAreBound() async throws {
        try await withPostgresStorage { storage in
            let hostile = "x'); DROP TABLE objects; --"
            try await storage.objects.insert(
                object("Post", hostile, document: #"{"guid":"h","t":"\#(hostile)"}"#))
            let filter = try QueryParser.parse("(t eq 'x''); DROP TABLE objects; --' and t matches '^x''')")
            let page = try await storage.objects.list(ListRequest(collection: "Post", filter: filter))
            #expect(page.documents.count == 1)
            #expect(try await storage.objects.object(in: "Post", guid: hostile) != nil)
        }
    }
}
