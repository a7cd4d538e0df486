import Foundation
import RoostPostgres
import RoostQuery
import RoostStore
import Testing

/// The object store's tests, once for both backends (they were SQLite's in
/// Tests/RoostStoreTests/StoreTests.swift and RandomPickTests.swift).
@Suite("Object store on both backends")
struct PostgresStoreTests {
    @Test("insert, read back, refuse a duplicate guid", arguments: Backend.allCases)
    func insertAndRead(_ backend: Backend) async throws {
        try await withStorage(backend) { storage in
            let store = storage.objectStore
            let first = object("Post", "a", document: #"{"guid":"a","text":"hi"}"#)
            try await store.insert(first)
            #expect(try await store.object(in: "Post", guid: "a") == first)
            #expect(try await store.object(in: "Other", guid: "a") == nil)
            #expect(await storeError { try await store.insert(first) } == .duplicate)
            try await store.insert(object("Other", "a"))
        }
    }

    @Test(
        "a document's exact bytes survive: key order, number digits, escapes, U+0000",
        arguments: Backend.allCases)
    func exactBytes(_ backend: Backend) async throws {
        try await withStorage(backend) { storage in
            let text =
                #"{"z":1,"a":[1.50,-0,1E+2,12345678901234567890123,1e400,1e-400],"é":"\u00e9\u0000x","m":{"b":true,"a":null},"s":"tab\tq\"\\u0000"}"#
            let stored = object("Post", "bytes", document: text, acl: #"{"readUsers":["u\u0000"]}"#)
            try await storage.objectStore.insert(stored)
            let read = try #require(try await storage.objectStore.object(in: "Post", guid: "bytes"))
            #expect(read.document == Array(text.utf8))
            #expect(read.acl == stored.acl)
            let page = try await storage.objectStore.list(ListRequest(collection: "Post"))
            #expect(page.documents == [Array(text.utf8)])
        }
    }

    @Test("a failing write among concurrent ones leaves the others committed", arguments: Backend.allCases)
    func concurrentWriteIsolation(_ backend: Backend) async throws {
        try await withStorage(backend) { storage in
            let store = storage.objectStore
            try await store.insert(object("Post", "taken"))
            let succeeded = try await withThrowingTaskGroup(of: Bool.self) { group in
                for index in 0..<200 {
                    group.addTask {
                        do {
                            try await store.insert(object("Post", index % 10 == 0 ? "taken" : "g\(index)"))
                            return true
                        } catch StoreError.duplicate {
                            return false
                        }
                    }
                }
                return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
            }
            #expect(succeeded == 180)
            let page = try await store.list(ListRequest(collection: "Post", count: 1000, includeTotal: true))
            #expect(page.total == 181)
        }
    }

    @Test(
        "update commits only at the expected version, and tells a lost race from a missing object",
        arguments: Backend.allCases)
    func updateAtExpectedVersion(_ backend: Backend) async throws {
        try await withStorage(backend) { storage in
            let store = storage.objectStore
            try await store.insert(object("Post", "a"))
            var next = object("Post", "a", document: #"{"guid":"a","v":2}"#)
            next.version = 2
            try await store.update(next, expectedVersion: 1)
            #expect(try await store.object(in: "Post", guid: "a") == next)
            var stale = next
            stale.document = Array(#"{"guid":"a","v":"stale"}"#.utf8)
            #expect(await storeError { try await store.update(stale, expectedVersion: 1) } == .versionChanged)
            #expect(try await store.object(in: "Post", guid: "a") == next)
            #expect(
                await storeError { try await store.update(object("Post", "zz"), expectedVersion: 1) }
                    == .notFound)
        }
    }

    @Test(
        "delete commits only at the expected version, and reports a missing object",
        arguments: Backend.allCases)
    func delete(_ backend: Backend) async throws {
        try await withStorage(backend) { storage in
            let store = storage.objectStore
            try await store.insert(object("Post", "a"))
            #expect(
                await storeError { try await store.delete(in: "Post", guid: "a", expectedVersion: 2) }
                    == .versionChanged)
            #expect(try await store.object(in: "Post", guid: "a") != nil)
            try await store.delete(in: "Post", guid: "a", expectedVersion: 1)
            #expect(try await store.object(in: "Post", guid: "a") == nil)
            #expect(
                await storeError { try await store.delete(in: "Post", guid: "a", expectedVersion: 1) }
                    == .notFound)
        }
    }

    @Test(
        "list sorts by metadata or JSON fields, pages, and counts only on request",
        arguments: Backend.allCases)
    func listing(_ backend: Backend) async throws {
        try await withStorage(backend) { storage in
            let store = storage.objectStore
            for (index, name) in ["carol", "alice", "bob", "dave"].enumerated() {
                try await store.insert(
                    object(
                        "User", "u\(index)", createdAt: Int64(10 - index),
                        document: #"{"guid":"u\#(index)","name":"\#(name)","n":\#(index)}"#))
            }
            func guids(_ request: ListRequest) async throws -> [String] {
                try await store.list(request).documents.map(guid(of:))
            }
            let byName = [SortKey(field: FieldPath("name")!, descending: false)]
            let byCreation = [SortKey(field: FieldPath("createdAt")!, descending: false)]
            #expect(try await guids(ListRequest(collection: "User")) == ["u0", "u1", "u2", "u3"])
            #expect(
                try await guids(ListRequest(collection: "User", sort: byName)) == ["u1", "u2", "u0", "u3"])
            #expect(
                try await guids(ListRequest(collection: "User", sort: byCreation)) == [
                    "u3", "u2", "u1", "u0",
                ])
            let page = ListRequest(
                collection: "User", sort: [SortKey(field: FieldPath("n")!, descending: true)], start: 1,
                count: 2)
            #expect(try await guids(page) == ["u2", "u1"])
            #expect(try await store.list(ListRequest(collection: "User")).total == nil)
            #expect(try await store.list(ListRequest(collection: "User", includeTotal: true)).total == 4)
            #expect(try await store.list(ListRequest(collection: "Nobody", includeTotal: true)).total == 0)
        }
    }

    @Test(
        "10,000 draws of random(guid) over 50 matches are uniform; excluded guids never come back",
        arguments: Backend.allCases)
    func randomPickIsUniform(_ backend: Backend) async throws {
        try await withStorage(backend) { storage in
            let store = storage.objectStore
            for index in 0..<60 {
                let kind = index < 51 ? "match" : "other"
                try await store.insert(
                    object("Thing", "t\(index)", document: #"{"guid":"t\#(index)","kind":"\#(kind)"}"#))
            }
            let filter = QueryExpression.and([
                .comparison(FieldPath("kind")!, .eq, .string("match")),
                .comparison(FieldPath("guid")!, .ne, .string("t7")),
            ])
            var counts: [String: Int] = [:]
            for _ in 0..<10_000 {
                let document = try #require(try await store.randomObject(in: "Thing", matching: filter))
                counts[guid(of: document), default: 0] += 1
            }
            #expect(counts["t7"] == nil)
            #expect(counts.keys.allSatisfy { Int($0.dropFirst())! < 51 })
            // 49 degrees of freedom: the statistic exceeds 85.35 with probability 0.001.
            #expect(chiSquare(counts, categories: 50, draws: 10_000) < 85.35)
            let none = try await store.randomPick(
                ListRequest(
                    collection: "Thing", filter: .comparison(FieldPath("kind")!, .eq, .string("x")),
                    includeTotal: true))
            #expect(none.documents.isEmpty && none.total == 0)
        }
    }

    @Test("a selective random(guid) falls back to counting and stays uniform", arguments: Backend.allCases)
    func randomPickWhenSparse(_ backend: Backend) async throws {
        try await withStorage(backend) { storage in
            let store = storage.objectStore
            for index in 0..<2000 {
                try await store.insert(
                    object(
                        "Thing", "t\(index)", document: #"{"guid":"t\#(index)","rare":\#(index % 40 == 0)}"#))
            }
            let filter = QueryExpression.comparison(FieldPath("rare")!, .eq, .bool(true))
            var counts: [String: Int] = [:]
            for _ in 0..<5000 {
                let document = try #require(try await store.randomObject(in: "Thing", matching: filter))
                counts[guid(of: document), default: 0] += 1
            }
            #expect(counts.count == 50)
            #expect(counts.keys.allSatisfy { Int($0.dropFirst())! % 40 == 0 })
            #expect(chiSquare(counts, categories: 50, draws: 5000) < 85.35)
            #expect(
                try await store.randomObject(
                    in: "Thing", matching: .comparison(FieldPath("rare")!, .eq, .string("no"))) == nil)
            #expect(try await store.randomObject(in: "Empty", matching: nil) == nil)
        }
    }

    @Test("objects by guid: many guids in chunks, with a restriction", arguments: Backend.allCases)
    func objectsByGuid(_ backend: Backend) async throws {
        try await withStorage(backend) { storage in
            let store = storage.objectStore
            for index in 0..<1200 {
                try await store.insert(
                    object("Thing", "t\(index)", document: #"{"guid":"t\#(index)","odd":\#(index % 2 == 1)}"#)
                )
            }
            let wanted = (0..<1300).map { "t\($0)" }
            #expect(try await store.objects(in: "Thing", guids: wanted).count == 1200)
            let odd = try await store.objects(
                in: "Thing", guids: wanted, restriction: .comparison(FieldPath("odd")!, .eq, .bool(true)))
            #expect(odd.count == 600 && odd["t1"] != nil && odd["t2"] == nil)
        }
    }
}
