import Foundation
import RoostCore
import RoostPostgres
import RoostStore
import RoostTestSupport
import Synchronization
import Testing

@testable import RoostScripts
@testable import RoostServer

/// What a dispatcher's `run` saw, a clock the test moves, and how often each event fails first.
final class HandlerProbe: Sendable {
    let runs = Mutex<[String]>([])
    let now = Mutex<Int64>(1_000_000)
    /// Runs of one event that fail before one succeeds; `.max` fails them all.
    let failuresPerEvent: Mutex<Int>
    /// The run during which the dispatcher's task is cancelled, as a stop or a crash mid-run.
    let cancelDuring: Mutex<String?>

    init(failuresPerEvent: Int = 0, cancelDuring: String? = nil) {
        self.failuresPerEvent = Mutex(failuresPerEvent)
        self.cancelDuring = Mutex(cancelDuring)
    }

    var clock: @Sendable () -> Int64 { { [self] in now.withLock { $0 } } }

    func advance(_ milliseconds: Int64) { now.withLock { $0 += milliseconds } }

    var run: AsyncHandlerDispatcher.Run {
        { [self] handler, change in
            let event = AsyncHandlerDispatcher.eventID(of: change)
            let earlier = runs.withLock { runs in
                defer { runs.append("\(handler.name) \(event)") }
                return runs.filter { $0 == "\(handler.name) \(event)" }.count
            }
            if cancelDuring.withLock({ $0 == event }) { withUnsafeCurrentTask { $0?.cancel() } }
            if earlier < failuresPerEvent.withLock({ $0 }) { throw ProbeFailure(attempt: earlier + 1) }
        }
    }
}

struct ProbeFailure: Error, CustomStringConvertible {
    let attempt: Int
    var description: String { "attempt \(attempt) failed" }
}

/// An ASYNC handler of Post creates and updates.
let countHandler = ScriptHandler(
    name: "Count", collection: "Post", events: [.create, .update], phase: .async,
    entry: ScriptEntry(module: "scripts/Count", function: "count"))

func dispatcher(
    _ storage: any Storage, _ probe: HandlerProbe, holder: String = "one",
    handlers: [ScriptHandler] = [countHandler],
    batch: Int = 100
) -> AsyncHandlerDispatcher {
    var options = AsyncDispatchOptions()
    options.batch = batch
    options.holder = holder
    options.pollInterval = .milliseconds(20)
    return AsyncHandlerDispatcher(
        outbox: storage.scriptOutbox, log: storage.changeLog, options: options, handlers: { handlers },
        clock: probe.clock, run: probe.run)
}

@Suite("Async handler dispatcher")
struct AsyncDispatcherTests {
    @Test(
        "a run that keeps failing is retried after 1 s, 2 s, 4 s … and given up after 8",
        arguments: Backend.allCases)
    func backoffAndGiveUp(_ backend: Backend) async throws {
        try await withStorage(backend) { storage in
            let probe = HandlerProbe(failuresPerEvent: .max)
            let dispatcher = dispatcher(storage, probe)
            try await storage.objectStore.insert(object("Post", "p1"))
            try await storage.objectStore.insert(object("Other", "o1"))
            try await dispatcher.dispatchRound()
            #expect(try await storage.scriptOutbox.dispatchedThrough() == 2)
            var delays: [Int64] = []
            while let run = try await storage.scriptOutbox.failedRuns(limit: 10).first,
                let next = run.nextAttempt
            {
                delays.append(next - probe.clock())
                // Not due yet: nothing runs.
                probe.advance(next - probe.clock() - 1)
                try await dispatcher.dispatchRound()
                #expect(try await storage.scriptOutbox.failedRuns(limit: 10).first?.attempts == run.attempts)
                probe.advance(1)
                try await dispatcher.dispatchRound()
            }
            #expect(delays == [1000, 2000, 4000, 8000, 16000, 32000, 64000])
            let given = try #require(try await storage.scriptOutbox.failedRuns(limit: 10).first)
            #expect(given.state == .failedForGood && given.attempts == 8 && given.error == "attempt 8 failed")
            #expect(given.eventID == "Post:1")
            #expect(
                dispatcher.metrics.snapshot["Count"]
                    == AsyncHandlerMetrics.Counts(runs: 8, failures: 8, gaveUp: 1))
            // Re-queued through the store (as `roost events retry` does), it runs again at once.
            probe.failuresPerEvent.withLock { $0 = 0 }
            #expect(try await storage.scriptOutbox.requeue(events: ["Post:1"], now: probe.clock()) == 1)
            try await dispatcher.dispatchRound()
            #expect(try await storage.scriptOutbox.failedRuns(limit: 10).isEmpty)
            #expect(probe.runs.withLock { $0.count } == 9)
            #expect(
                dispatcher.metrics.render().contains("roost_async_handler_runs_total{handler=\"Count\"} 9\n"))
        }
    }

    @Test("the delay doubles up to 10 minutes")
    func maximumDelay() {
        var options = AsyncDispatchOptions()
        options.attempts = 30
        #expect(options.nextAttempt(after: 1, now: 0) == 1000)
        #expect(options.nextAttempt(after: 10, now: 0) == 512_000)
        #expect(options.nextAttempt(after: 11, now: 0) == 600_000)
        #expect(options.nextAttempt(after: 29, now: 0) == 600_000)
        #expect(options.nextAttempt(after: 30, now: 0) == nil)
    }

    @Test("a run that fails twice then succeeds leaves no failure", arguments: Backend.allCases)
    func retriesUntilSuccess(_ backend: Backend) async throws {
        try await withStorage(backend) { storage in
            let probe = HandlerProbe(failuresPerEvent: 2)
            let dispatcher = dispatcher(storage, probe)
            try await storage.objectStore.insert(object("Post", "p1"))
            try await dispatcher.dispatchRound()
            probe.advance(1000)
            try await dispatcher.dispatchRound()
            #expect(try await storage.scriptOutbox.failedRuns(limit: 10).first?.attempts == 2)
            probe.advance(2000)
            try await dispatcher.dispatchRound()
            #expect(try await storage.scriptOutbox.failedRuns(limit: 10).isEmpty)
            #expect(
                dispatcher.metrics.snapshot["Count"]
                    == AsyncHandlerMetrics.Counts(runs: 3, failures: 2, gaveUp: 0))
        }
    }

    @Test(
        "a dispatcher stopped mid-run: its successor re-runs the change in progress and nothing finished",
        arguments: Backend.allCases)
    func cursorSurvivesRestart(_ backend: Backend) async throws {
        try await withStorage(backend) { storage in
            let probe = HandlerProbe(cancelDuring: "Post:2")
            for index in 1...3 { try await storage.objectStore.insert(object("Post", "p\(index)")) }
            let first = dispatcher(storage, probe, holder: "one")
            try await Task { try await first.dispatchRound() }.value
            #expect(try await storage.scriptOutbox.dispatchedThrough() == 1)
            await first.stop()
            probe.cancelDuring.withLock { $0 = nil }
            let second = dispatcher(storage, probe, holder: "two")
            try await second.dispatchRound()
            #expect(try await storage.scriptOutbox.dispatchedThrough() == 3)
            #expect(
                probe.runs.withLock { $0 } == [
                    "Count Post:1", "Count Post:2", "Count Post:2", "Count Post:3",
                ])
            #expect(try await storage.scriptOutbox.failedRuns(limit: 10).isEmpty)
        }
    }

    @Test("events no handler runs: other collections and events, revocations, access-list-only updates")
    func matching() {
        let create = Change(
            sequence: 1, collection: "Post", guid: "p", operation: .create, version: 1, at: 0, document: [1])
        var update = create
        update.operation = .update
        update.previousDocument = [1]
        #expect(AsyncHandlerDispatcher.runs(countHandler, on: create))
        #expect(!AsyncHandlerDispatcher.runs(countHandler, on: update))
        update.document = [2]
        #expect(AsyncHandlerDispatcher.runs(countHandler, on: update))
        var delete = create
        delete.operation = .delete
        #expect(!AsyncHandlerDispatcher.runs(countHandler, on: delete))
        var revoke = create
        revoke.operation = .revoke
        revoke.collection = "Post"
        #expect(!AsyncHandlerDispatcher.runs(countHandler, on: revoke))
        var other = create
        other.collection = "Other"
        #expect(!AsyncHandlerDispatcher.runs(countHandler, on: other))
    }

    @Test(
        "without async handlers the cursor follows the log's end and the log is not pinned",
        arguments: Backend.allCases)
    func noHandlers(_ backend: Backend) async throws {
        try await withStorage(backend) { storage in
            let probe = HandlerProbe()
            let idle = dispatcher(storage, probe, handlers: [])
            try await storage.objectStore.insert(object("Post", "p1"))
            try await idle.dispatchRound()
            #expect(try await storage.scriptOutbox.dispatchedThrough() == 1)
            #expect(try await storage.scriptOutbox.subscriptions().isEmpty)
            #expect(probe.runs.withLock { $0 }.isEmpty)
            await idle.stop()
            // A handler defined later runs on what is committed from then on.
            let busy = dispatcher(storage, probe, holder: "two")
            try await storage.objectStore.insert(object("Post", "p2"))
            try await busy.dispatchRound()
            #expect(probe.runs.withLock { $0 } == ["Count Post:2"])
            #expect(try await storage.scriptOutbox.subscriptions().count == 2)
        }
    }

    @Test(
        "started, it runs a committed change without being asked, and stop gives the lease up",
        arguments: Backend.allCases)
    func startAndStop(_ backend: Backend) async throws {
        try await withStorage(backend) { storage in
            let probe = HandlerProbe()
            let running = dispatcher(storage, probe)
            running.start()
            try await storage.objectStore.insert(object("Post", "p1"))
            try await eventually { probe.runs.withLock { $0 } == ["Count Post:1"] }
            await running.stop()
            #expect(try await storage.scriptOutbox.claimLease(holder: "other", for: .seconds(30)))
        }
    }
}

/// Waits (up to 30 s) until `condition` holds.
func eventually(_ condition: @Sendable () async throws -> Bool) async throws {
    let deadline = ContinuousClock.now + .seconds(30)
    while try await !condition() {
        guard ContinuousClock.now < deadline else {
            Issue.record("the condition never held")
            return
        }
        try await Task.sleep(for: .milliseconds(20))
    }
}

@Suite("Async handler dispatchers sharing PostgreSQL")
struct SharedDispatcherTests {
    @Test("two instances' dispatchers on one database never both run one change")
    func oneDispatcherAtATime() async throws {
        try await PostgresTestDatabase.with { test in
            let one = try PostgresStorage(configuration: test.configuration, collections: .builtIn)
            let two = try PostgresStorage(configuration: test.configuration, collections: .builtIn)
            let probes = [HandlerProbe(), HandlerProbe()]
            let dispatchers = [
                dispatcher(one, probes[0], holder: "one", batch: 4),
                dispatcher(two, probes[1], holder: "two", batch: 4),
            ]
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    for index in 1...40 { try await one.objectStore.insert(object("Post", "p\(index)")) }
                }
                for (index, dispatcher) in dispatchers.enumerated() {
                    let storage = index == 0 ? one : two
                    group.addTask {
                        while try await storage.scriptOutbox.dispatchedThrough() < 40 {
                            try await dispatcher.dispatchRound()
                            // Given up after each round, the lease changes hands again and again.
                            try await storage.scriptOutbox.releaseLease(holder: dispatcher.options.holder)
                            try await Task.sleep(for: .milliseconds(2))
                        }
                    }
                }
                try await group.waitForAll()
            }
            let runs = probes.flatMap { probe in probe.runs.withLock { $0 } }
            #expect(runs.count == 40 && Set(runs).count == 40)
            for dispatcher in dispatchers { await dispatcher.stop() }
            await one.close()
            await two.close()
        }
    }
}
