import Foundation
import RoostCore
import RoostPostgres
import RoostSQLite
import RoostStore
import RoostTestSupport
import Testing

/// Wall-clock milliseconds now.
func nowMilliseconds() -> Int64 { Int64(Date().timeIntervalSince1970 * 1000) }

@Suite("Script outbox store")
struct ScriptOutboxStoreTests {
    @Test("the cursor only moves forward, and only for the lease's holder", arguments: Backend.allCases)
    func cursorAndLease(_ backend: Backend) async throws {
        try await withStorage(backend) { storage in
            let outbox = storage.scriptOutbox
            #expect(try await outbox.dispatchedThrough() == 0)
            #expect(try await outbox.claimLease(holder: "a", for: .seconds(30)))
            #expect(try await !outbox.claimLease(holder: "b", for: .seconds(30)))
            #expect(try await outbox.claimLease(holder: "a", for: .seconds(30)))
            #expect(try await !outbox.complete(through: 5, failures: [], holder: "b", lease: .seconds(30)))
            #expect(try await outbox.dispatchedThrough() == 0)
            #expect(try await outbox.complete(through: 5, failures: [], holder: "a", lease: .seconds(30)))
            #expect(try await outbox.complete(through: 3, failures: [], holder: "a", lease: .seconds(30)))
            #expect(try await outbox.dispatchedThrough() == 5)
            // Released, the lease goes to whoever asks next; expired, likewise.
            try await outbox.releaseLease(holder: "b")
            #expect(try await !outbox.claimLease(holder: "b", for: .seconds(30)))
            try await outbox.releaseLease(holder: "a")
            #expect(try await outbox.claimLease(holder: "b", for: .zero))
            #expect(try await outbox.claimLease(holder: "a", for: .seconds(30)))
            #expect(try await !outbox.complete(through: 9, failures: [], holder: "b", lease: .seconds(30)))
            #expect(try await outbox.dispatchedThrough() == 5)
        }
    }

    @Test(
        "a delete's log entry names the user who deleted the object, and its failed run keeps them",
        arguments: Backend.allCases)
    func deleter(_ backend: Backend) async throws {
        try await withStorage(backend) { storage in
            let store = storage.objectStore
            for guid in ["p1", "p2", "p3"] { try await store.insert(object("Post", guid)) }
            try await store.delete(in: "Post", guid: "p1", expectedVersion: 1, marking: nil, by: "u-dana")
            try await store.delete(in: "Post", guid: "p2", expectedVersion: 1, marking: nil, by: nil)
            try await store.delete(in: "Post", guid: "p3", expectedVersion: 1, marking: nil, by: "u-eve")
            let changes = try await storage.changeLog.changes(after: 0, limit: 10, maxBytes: 1 << 20)
            #expect(changes.map(\.operation) == [.create, .create, .create, .delete, .delete, .delete])
            #expect(changes.map(\.deletedBy) == [nil, nil, nil, "u-dana", nil, "u-eve"])
            let outbox = storage.scriptOutbox
            #expect(try await outbox.claimLease(holder: "a", for: .seconds(30)))
            let failure = RunFailure(
                sequence: changes[3].sequence, handler: "Mourn", attempts: 1, error: "boom", nextAttempt: 1000
            )
            #expect(
                try await outbox.complete(
                    through: changes[5].sequence, failures: [failure], holder: "a", lease: .seconds(30)))
            #expect(try await outbox.failedRuns(limit: 10).map(\.change.deletedBy) == ["u-dana"])
        }
    }

    @Test("claims racing for a free lease: exactly one wins", arguments: Backend.allCases)
    func leaseExclusivity(_ backend: Backend) async throws {
        try await withStorage(backend) { storage in
            let outbox = storage.scriptOutbox
            let winners = try await withThrowingTaskGroup(of: Bool.self) { group in
                for index in 0..<8 {
                    group.addTask { try await outbox.claimLease(holder: "h\(index)", for: .seconds(30)) }
                }
                return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
            }
            #expect(winners == 1)
        }
    }

    @Test("failed runs keep their event, come due, give up, and are re-queued", arguments: Backend.allCases)
    func failures(_ backend: Backend) async throws {
        try await withStorage(backend) { storage in
            let outbox = storage.scriptOutbox
            let post = object("Post", "p1", document: #"{"guid":"p1","title":"hello"}"#)
            try await storage.objectStore.insert(post)
            try await storage.objectStore.insert(object("Post", "p2"))
            #expect(try await outbox.claimLease(holder: "a", for: .seconds(30)))
            let long = String(repeating: "é", count: 3000)
            let failure = RunFailure(
                sequence: 1, handler: "Count", attempts: 1, error: long, nextAttempt: 1000)
            #expect(failure.error.utf8.count <= ScriptOutbox.maximumErrorBytes)
            #expect(
                try await !outbox.complete(through: 1, failures: [failure], holder: "b", lease: .seconds(30)))
            #expect(try await outbox.failedRuns(limit: 10).isEmpty)
            #expect(
                try await outbox.complete(through: 1, failures: [failure], holder: "a", lease: .seconds(30)))
            // The log may drop the event: the failed run keeps its own copy.
            #expect(
                try await storage.changeLog.trim(
                    ChangeRetention(age: .zero, entries: 1), now: nowMilliseconds() + 1000, batch: 10) == 1)
            let runs = try await outbox.failedRuns(limit: 10)
            #expect(runs.count == 1)
            let run = try #require(runs.first)
            #expect(run.eventID == "Post:1" && run.handler == "Count" && run.attempts == 1)
            #expect(run.change.document == post.document && run.change.operation == .create)
            #expect(run.error == failure.error && run.state == .pendingRetry && !run.trimmed)
            #expect(try await outbox.dueRetries(now: 999, limit: 10).isEmpty)
            #expect(try await outbox.dueRetries(now: 1000, limit: 10).map(\.eventID) == ["Post:1"])
            // A retry that fails for the last time gives the event up.
            let last = RunFailure(sequence: 1, handler: "Count", attempts: 8, error: "boom", nextAttempt: nil)
            #expect(try await !outbox.retried(sequence: 1, handler: "Count", failure: last, holder: "b"))
            #expect(try await outbox.retried(sequence: 1, handler: "Count", failure: last, holder: "a"))
            let given = try #require(try await outbox.failedRuns(limit: 10).first)
            #expect(given.state == .failedForGood && given.attempts == 8 && given.error == "boom")
            #expect(try await outbox.dueRetries(now: .max, limit: 10).isEmpty)
            // Re-queued: due now, attempts reset; unknown and malformed ids re-queue nothing.
            #expect(try await outbox.requeue(events: ["Post:2", "Other:1", "nonsense"], now: 50) == 0)
            #expect(try await outbox.requeue(events: ["Post:1", "Post:1"], now: 50) == 1)
            let requeued = try #require(try await outbox.dueRetries(now: 50, limit: 10).first)
            #expect(requeued.attempts == 0 && requeued.nextAttempt == 50 && requeued.state == .pendingRetry)
            // A retry that succeeds forgets the run.
            #expect(try await outbox.retried(sequence: 1, handler: "Count", failure: nil, holder: "a"))
            #expect(try await outbox.failedRuns(limit: 10).isEmpty)
        }
    }

    @Test(
        "runs given up are kept up to a number, the oldest dropped first; runs pending a retry always stay",
        arguments: Backend.allCases)
    func givenUpRunsAreCapped(_ backend: Backend) async throws {
        try await withStorage(backend) { storage in
            let outbox = storage.scriptOutbox
            for index in 1...5 { try await storage.objectStore.insert(object("Post", "p\(index)")) }
            #expect(try await outbox.claimLease(holder: "a", for: .seconds(30)))
            let failures = (1...5).map { sequence in
                RunFailure(
                    sequence: Int64(sequence), handler: "Count", attempts: sequence == 1 ? 1 : 8,
                    error: "boom",
                    nextAttempt: sequence == 1 ? 1000 : nil)
            }
            #expect(
                try await outbox.complete(
                    through: 5, failures: failures, holder: "a", lease: .seconds(30), keepingGivenUp: 2))
            #expect(try await outbox.failedRuns(limit: 10).map(\.eventID) == ["Post:1", "Post:4", "Post:5"])
            // The pending run, given up in its turn, is now the oldest given up: it goes.
            let last = RunFailure(sequence: 1, handler: "Count", attempts: 8, error: "boom", nextAttempt: nil)
            #expect(
                try await outbox.retried(
                    sequence: 1, handler: "Count", failure: last, holder: "a", keepingGivenUp: 2))
            #expect(try await outbox.failedRuns(limit: 10).map(\.eventID) == ["Post:4", "Post:5"])
        }
    }

    @Test(
        "while async handlers are recorded the log keeps what they have not run, up to the hard cap, whose losses are recorded",
        arguments: Backend.allCases)
    func trimPinning(_ backend: Backend) async throws {
        try await withStorage(backend) { storage in
            let outbox = storage.scriptOutbox
            let log = storage.changeLog
            for index in 1...5 { try await storage.objectStore.insert(object("Post", "p\(index)")) }
            try await storage.objectStore.insert(object("Other", "o1"))
            try await outbox.setSubscriptions([
                OutboxSubscription(handler: "Count", collection: "Post", operation: .create),
                OutboxSubscription(handler: "Count", collection: "Post", operation: .delete),
            ])
            #expect(try await outbox.subscriptions().count == 2)
            #expect(try await outbox.claimLease(holder: "a", for: .seconds(30)))
            #expect(try await outbox.complete(through: 2, failures: [], holder: "a", lease: .seconds(30)))
            let now = nowMilliseconds() + 1000
            // The window would let 1...5 go; the cursor holds the log at 2.
            #expect(try await log.trim(ChangeRetention(age: .zero, entries: 1), now: now, batch: 100) == 2)
            #expect(try await log.window().trimmedThrough == 2)
            #expect(try await log.trim(ChangeRetention(age: .zero, entries: 1), now: now, batch: 100) == 0)
            // The hard cap (2 entries past the window) forces 3 out: recorded as trimmed, cursor past it.
            let capped = ChangeRetention(age: .zero, entries: 1, undispatchedEntries: 2)
            #expect(try await log.trim(capped, now: now, batch: 100) == 1)
            #expect(try await outbox.dispatchedThrough() == 3)
            let runs = try await outbox.failedRuns(limit: 10)
            #expect(runs.map(\.eventID) == ["Post:3"])
            let trimmed = try #require(runs.first)
            #expect(
                trimmed.trimmed && trimmed.state == .failedForGood
                    && trimmed.error == ScriptOutbox.trimmedError)
            #expect(trimmed.change.guid == "p3" && trimmed.change.document == nil)
            // Nothing to run again: retry leaves it failed.
            #expect(try await outbox.requeue(events: nil, now: 1) == 0)
            #expect(try await outbox.requeue(events: ["Post:3"], now: 1) == 0)
            // The age cap forces the rest out, and an event no handler runs ("Other") is not recorded.
            let aged = ChangeRetention(age: .zero, entries: 1, undispatchedAge: .zero)
            #expect(try await log.trim(aged, now: now, batch: 100) == 2)
            #expect(try await outbox.dispatchedThrough() == 5)
            #expect(try await outbox.failedRuns(limit: 10).map(\.eventID) == ["Post:3", "Post:4", "Post:5"])
            // Without async handlers the log is trimmed to its window alone.
            try await outbox.setSubscriptions([])
            try await storage.objectStore.insert(object("Post", "p6"))
            #expect(
                try await log.trim(ChangeRetention(age: .zero, entries: 1), now: now + 1000, batch: 100) == 1)
            #expect(try await outbox.dispatchedThrough() == 5)
        }
    }

    @Test(
        "an upgraded database's cursor starts at its log's end: new handlers do not run on old events",
        arguments: Backend.allCases)
    func upgradeStartsAtTheEnd(_ backend: Backend) async throws {
        switch backend {
        case .sqlite:
            let directory = NSTemporaryDirectory() + "roost-outbox-upgrade-" + UUID().uuidString
            defer { try? FileManager.default.removeItem(atPath: directory) }
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            let older = try SQLiteDatabase(
                path: directory + "/" + SQLiteStorage.fileName,
                migrations: SQLiteStorage.migrations.filter { $0.version < 25 })
            for index in 1...3 {
                try await SQLiteObjectStore(database: older, collections: .builtIn).insert(
                    object("Post", "p\(index)"))
            }
            await older.close()
            let storage = try SQLiteStorage(directory: directory, collections: .builtIn)
            #expect(try await storage.scriptOutbox.dispatchedThrough() == 3)
            await storage.close()
        case .postgres:
            try await PostgresTestDatabase.with { test in
                let older = try PostgresDatabase(
                    configuration: test.configuration,
                    migrations: PostgresStorage.migrations.filter { $0.version < 70 })
                for index in 1...3 {
                    try await PostgresObjectStore(database: older, collections: .builtIn).insert(
                        object("Post", "p\(index)"))
                }
                await older.close()
                let storage = try PostgresStorage(
                    configuration: test.configuration, collections: .builtIn, listening: false)
                #expect(try await storage.scriptOutbox.dispatchedThrough() == 3)
                await storage.close()
            }
        }
    }

    @Test("the hard cap's boundary: older than the age cap or beyond the entry cap, never inside the window")
    func forcedBoundary() {
        let day: Int64 = 86_400_000
        let retention = ChangeRetention(
            age: .seconds(86_400), entries: 10, undispatchedAge: .seconds(2 * 86_400),
            undispatchedEntries: 100)
        let now = 10 * day
        let oldest: [(sequence: Int64, at: Int64)] = [(1, 6 * day), (2, 7 * day + 1), (3, 8 * day)]
        // Only entry 1 is older than 1 + 2 days.
        #expect(retention.forcedBoundary(oldest: oldest, last: 50, now: now) == 1)
        // With 112 entries, 1 and 2 are beyond 10 + 100 from the end.
        #expect(retention.forcedBoundary(oldest: oldest, last: 112, now: now) == 2)
        // An entry inside the age window never goes, however many follow it.
        #expect(retention.forcedBoundary(oldest: [(1, now)], last: 1_000_000, now: now) == nil)
    }
}
