import Foundation
import RoostQuery
import Synchronization
import Testing

@testable import RoostSQLite
@testable import RoostStore

/// A statement that never ends on its own: counts forever.
private let endless: SQL =
    "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c"

/// A database whose reads all go to the pool, unless `inline` lets them start on the caller.
private func openDatabase(_ limits: ReadLimits, inline: Bool = false) throws -> SQLiteDatabase {
    var limits = limits
    if !inline { limits.inlineSteps = 0 }
    return try SQLiteStorage(directory: temporaryDirectory(), collections: .builtIn, readLimits: limits)
        .database
}

@Suite("Reader pool: deadlines, cancellation, bounds")
struct ReaderPoolTests {
    @Test("a read past its deadline is interrupted and reports the limit")
    func deadline() async throws {
        let database = try openDatabase(ReadLimits(threads: 1, timeout: .milliseconds(300)))
        await #expect(throws: StoreError.timeout(after: .milliseconds(300))) {
            try await database.pooledRead { try $0.first(endless) { $0.integer(0) } }
        }
        // The connection is usable again at once.
        #expect(try await database.pooledRead { try $0.first("SELECT 42") { $0.integer(0) } } == 42)
        await database.closeReaders()
    }

    @Test("a backtracking regular expression stops at the read's deadline")
    func regexDeadline() async throws {
        let database = try openDatabase(ReadLimits(threads: 1, timeout: .milliseconds(300)))
        let value = String(repeating: "a", count: 28) + "!"
        await #expect(throws: StoreError.timeout(after: .milliseconds(300))) {
            try await database.pooledRead { connection in
                try connection.first("SELECT \(value) REGEXP '^(a|a)*$'") { $0.integer(0) }
            }
        }
        await database.closeReaders()
    }

    @Test("cancelling the caller interrupts its statement")
    func cancellation() async throws {
        let database = try openDatabase(ReadLimits(threads: 1, timeout: .seconds(600)))
        let started = Atomic<Bool>(false)
        let read = Task {
            try await database.pooledRead { connection in
                started.store(true, ordering: .relaxed)
                return try connection.first(endless) { $0.integer(0) }
            }
        }
        while !started.load(ordering: .relaxed) { try await Task.sleep(for: .milliseconds(5)) }
        read.cancel()
        await #expect(throws: CancellationError.self) { try await read.value }
        #expect(try await database.pooledRead { try $0.first("SELECT 1") { $0.integer(0) } } == 1)
        await database.closeReaders()
    }

    @Test("beyond the queue limit a read is refused at once")
    func queueLimit() async throws {
        let database = try openDatabase(ReadLimits(threads: 1, queueLimit: 1, timeout: .seconds(600)))
        let started = Atomic<Bool>(false)
        let running = Task {
            try await database.pooledRead { connection in
                started.store(true, ordering: .relaxed)
                return try connection.first(endless) { $0.integer(0) }
            }
        }
        while !started.load(ordering: .relaxed) { try await Task.sleep(for: .milliseconds(5)) }
        let waiting = Task { try await database.pooledRead { try $0.first("SELECT 7") { $0.integer(0) } } }
        while database.waitingReads < 1 { try await Task.sleep(for: .milliseconds(5)) }
        var refused = false
        do {
            _ = try await database.pooledRead { _ in 0 }
        } catch StoreError.busy {
            refused = true
        }
        #expect(refused)
        running.cancel()
        _ = try? await running.value
        #expect(try await waiting.value == 7)
        await database.closeReaders()
    }

    @Test("a slow read yields the CPU: its thread runs at a lower priority until the read ends")
    func slowReadsYield() async throws {
        let database = try openDatabase(ReadLimits(threads: 1, timeout: .seconds(60), slowAfter: .zero))
        let niceness: @Sendable () -> Int32 = { getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0) }
        let during = try await database.pooledRead { connection -> Int32 in
            _ = try connection.first(
                "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c LIMIT 100000) SELECT count(*) FROM c"
            ) { $0.integer(0) }
            return niceness()
        }
        #expect(during == ReadLimits.slowReadNice)
        #expect(try await database.pooledRead { _ in niceness() } == 0)
        await database.closeReaders()
    }

    @Test("a quick read runs on the calling thread; one over the inline budget moves to a reader thread")
    func inlineBudget() async throws {
        let database = try openDatabase(
            ReadLimits(threads: 1, timeout: .seconds(60), inlineSteps: 64_000), inline: true)
        #expect(try await database.pooledRead { try $0.first("SELECT 1") { $0.integer(0) } } == 1)
        #expect(database.readsOnReaderThreads == 0)
        let attempts = Atomic<Int>(0)
        let count = try await database.pooledRead { connection -> Int64? in
            attempts.add(1, ordering: .relaxed)
            return try connection.first(
                "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c LIMIT 300000) SELECT count(*) FROM c"
            ) { $0.integer(0) }
        }
        #expect(count == 300_000)
        #expect(attempts.load(ordering: .relaxed) == 2)
        #expect(database.readsOnReaderThreads == 1)
        await database.closeReaders()
    }

    @Test("a query with a regular expression never starts on the calling thread")
    func regexSkipsTheLoop() async throws {
        let storage = try SQLiteStorage(
            directory: temporaryDirectory(), collections: .builtIn, readLimits: ReadLimits(threads: 1))
        try await storage.objects.insert(object("Word", "w1", document: #"{"guid":"w1","text":"abc"}"#))
        let text = FieldPath("text")!
        let equal = try await storage.objects.list(
            ListRequest(collection: "Word", filter: .comparison(text, .eq, .string("abc"))))
        #expect(equal.documents.count == 1)
        #expect(storage.database.readsOnReaderThreads == 0)
        let matching = try await storage.objects.list(
            ListRequest(collection: "Word", filter: .matches(text, "^a")))
        #expect(matching.documents.count == 1)
        #expect(storage.database.readsOnReaderThreads == 1)
        await storage.database.close()
    }

    @Test("statements of one read see one snapshot, so a page and its total agree")
    func oneTransaction() async throws {
        let database = try openDatabase(ReadLimits(threads: 1))
        let path = database.path
        let (before, after) = try await database.pooledRead { connection -> (Int64, Int64) in
            let before = try connection.first("SELECT count(*) FROM objects") { $0.integer(0) } ?? -1
            // Another connection commits between the two statements.
            let writer = try SQLiteConnection(path: path)
            try writer.execute(
                "INSERT INTO objects (collection, guid, document, created_at, updated_at, version) VALUES ('C', 'g', '{}', 1, 1, 1)"
            )
            let after = try connection.first("SELECT count(*) FROM objects") { $0.integer(0) } ?? -1
            return (before, after)
        }
        #expect(before == 0 && after == 0)
        #expect(
            try await database.pooledRead { try $0.first("SELECT count(*) FROM objects") { $0.integer(0) } }
                == 1)
        await database.closeReaders()
    }

    @Test("after close, reads are refused and the threads are gone")
    func close() async throws {
        let database = try openDatabase(ReadLimits(threads: 2))
        #expect(try await database.pooledRead { try $0.first("SELECT 1") { $0.integer(0) } } == 1)
        await database.closeReaders()
        await #expect(throws: StoreError.closed) {
            try await database.pooledRead { try $0.first("SELECT 1") { $0.integer(0) } }
        }
    }

    @Test("close fails the reads still waiting with closed and lets the running one finish")
    func closeWithReadsWaiting() async throws {
        let database = try openDatabase(ReadLimits(threads: 1, timeout: .seconds(600)))
        let started = Atomic<Bool>(false)
        let release = Atomic<Bool>(false)
        let running = Task {
            try await database.pooledRead { connection -> Int64 in
                started.store(true, ordering: .relaxed)
                while !release.load(ordering: .relaxed) { usleep(1000) }
                return try connection.first("SELECT 5") { $0.integer(0) } ?? 0
            }
        }
        while !started.load(ordering: .relaxed) { try await Task.sleep(for: .milliseconds(5)) }
        let waiting = Task { try await database.pooledRead { try $0.first("SELECT 7") { $0.integer(0) } } }
        while database.waitingReads < 1 { try await Task.sleep(for: .milliseconds(5)) }
        let closing = Task { await database.closeReaders() }
        await #expect(throws: StoreError.closed) { try await waiting.value }
        release.store(true, ordering: .relaxed)
        #expect(try await running.value == 5)
        await closing.value
    }

    @Test("patterns that are too costly to compile are refused before they run")
    func costlyPatterns() {
        #expect(BoundedRegex.problem(with: "^a{1,1000}$") == nil)
        #expect(BoundedRegex.problem(with: "(a{1000}){1001}") != nil)
        #expect(BoundedRegex.problem(with: "a{99999999999}") != nil)
        #expect(BoundedRegex.problem(with: "\\{99999\\}") == nil)
        #expect(BoundedRegex.problem(with: String(repeating: "a", count: 257)) != nil)
        #expect(BoundedRegex.problem(with: "(") != nil)
    }
}
