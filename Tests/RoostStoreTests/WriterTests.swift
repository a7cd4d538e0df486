import Dispatch
import Foundation
import Synchronization
import Testing

@testable import RoostSQLite
@testable import RoostStore

@Suite("SQLite writer")
struct WriterTests {
    func count(_ store: SQLiteObjectStore) throws -> Int64 {
        try store.database.read { try $0.first("SELECT count(*) FROM objects") { $0.integer(0) } ?? -1 }
    }

    @Test("a write that throws after a statement ran leaves nothing behind")
    func failingWriteRollsBack() async throws {
        let store = try SQLiteObjectStore(directory: temporaryDirectory(), collections: .builtIn)
        await #expect(throws: Failure.self) {
            try await store.database.write { connection in
                try SQLiteObjectStore.insert(object("Post", "a"), derived: DerivedRows(), on: connection)
                throw Failure()
            }
        }
        #expect(try count(store) == 0)
        #expect(try await store.object(in: "Post", guid: "a") == nil)
    }

    @Test("a failing job rolls back alone: the other jobs of its batch commit")
    func failingJobInABatch() async throws {
        let store = try SQLiteObjectStore(directory: temporaryDirectory(), collections: .builtIn)
        let database = store.database
        // The first job holds the writer until the next two are queued, so they share a batch.
        let gate = DispatchSemaphore(value: 0)
        let holding = Atomic(false)
        let holder = Task {
            try await database.write { _ in
                holding.store(true, ordering: .sequentiallyConsistent)
                gate.wait()
            }
        }
        while !holding.load(ordering: .sequentiallyConsistent) { try await Task.sleep(for: .milliseconds(1)) }
        let failing = Task {
            try await database.write { connection in
                try SQLiteObjectStore.insert(
                    object("Post", "failing"), derived: DerivedRows(), on: connection)
                throw Failure()
            }
        }
        let succeeding = Task {
            try await database.write { connection in
                try SQLiteObjectStore.insert(object("Post", "kept"), derived: DerivedRows(), on: connection)
            }
        }
        while database.queuedWriteCount < 2 { try await Task.sleep(for: .milliseconds(1)) }
        gate.signal()
        try await holder.value
        await #expect(throws: Failure.self) { try await failing.value }
        try await succeeding.value
        #expect(try await store.object(in: "Post", guid: "failing") == nil)
        #expect(try await store.object(in: "Post", guid: "kept") != nil)
        #expect(try count(store) == 1)
    }
}
