import Foundation
import RoostCore
import RoostStore
import RoostTestSupport
import Synchronization
import Testing

@testable import RoostScripts
@testable import RoostServer

/// Issue 24, item 12: ASYNC runs take turns by who made the change, run side by side within the
/// dispatcher's concurrency (one object's in order), and a round's retries are bounded.
@Suite("Async handler dispatcher: owners' turns, concurrency, bounded retries")
struct AsyncDispatcherTurnsTests {
    /// Records each run's start (and, for the handler `Slow`, its end), fails what it is told to.
    final class OrderProbe: Sendable {
        let order = Mutex<[String]>([])
        let now = Mutex<Int64>(1_000_000)
        let failing: Set<String>
        /// Opened by the first run of a handler other than `Slow`; `Slow` waits for it.
        let others = AsyncStream<Void>.makeStream()

        init(failing: Set<String> = []) { self.failing = failing }

        var clock: @Sendable () -> Int64 { { [self] in now.withLock { $0 } } }

        var run: AsyncHandlerDispatcher.Run {
            { [self] handler, change in
                let name =
                    "\(handler.name) \(change.guid)"
                    + (change.operation == .create ? "" : " \(change.operation.rawValue)")
                order.withLock { $0.append(name) }
                if handler.name == "Slow" {
                    // Waits for another run to start; a dispatcher running one at a time never
                    // starts one, so a bound keeps the test from hanging on the old code.
                    let stream = others.stream
                    _ = await withTaskGroup(of: Void.self) { group in
                        group.addTask { for await _ in stream { return } }
                        group.addTask { try? await Task.sleep(for: .seconds(20)) }
                        await group.next()
                        group.cancelAll()
                    }
                    order.withLock { $0.append("\(name) ended") }
                } else {
                    others.continuation.yield()
                }
                if failing.contains(handler.name) { throw ProbeFailure(attempt: 0) }
            }
        }
    }

    static let postHandler = ScriptHandler(
        name: "Count", collection: "Post", events: [.create, .update], phase: .async,
        entry: ScriptEntry(module: "scripts/Count", function: "count"))
    static let slowHandler = ScriptHandler(
        name: "Slow", collection: "Slow", events: [.create], phase: .async,
        entry: ScriptEntry(module: "scripts/Slow", function: "slow"))

    static func dispatcher(
        _ storage: any Storage, _ probe: OrderProbe, concurrency: Int, retriesPerRound: Int = 16,
        handlers: [ScriptHandler] = [postHandler]
    ) -> AsyncHandlerDispatcher {
        var options = AsyncDispatchOptions()
        options.holder = "one"
        options.concurrency = concurrency
        options.retriesPerRound = retriesPerRound
        return AsyncHandlerDispatcher(
            outbox: storage.scriptOutbox, log: storage.changeLog, options: options, handlers: { handlers },
            clock: probe.clock, run: probe.run)
    }

    static func post(_ guid: String, by user: String, in collection: String = "Post") -> StoredObject {
        object(collection, guid, createdBy: user, document: #"{"guid":"\#(guid)","updatedBy":"\#(user)"}"#)
    }

    @Test(
        "one owner's flood does not delay another owner's event: it runs within the first 2 runs of the round",
        arguments: Backend.allCases)
    func floodTakesTurns(_ backend: Backend) async throws {
        try await withStorage(backend) { storage in
            let probe = OrderProbe()
            for index in 1...40 { try await storage.objectStore.insert(Self.post("a\(index)", by: "alice")) }
            try await storage.objectStore.insert(Self.post("b1", by: "bob"))
            try await Self.dispatcher(storage, probe, concurrency: 1).dispatchRound()
            let order = probe.order.withLock { $0 }
            #expect(order.count == 41)
            let bob = try #require(order.firstIndex(of: "Count b1"))
            #expect(bob < 2, "bob's event ran as run \(bob + 1)")
            // Alice's own runs keep their order.
            #expect(order.filter { $0 != "Count b1" } == (1...40).map { "Count a\($0)" })
            #expect(try await storage.scriptOutbox.dispatchedThrough() == 41)
        }
    }

    @Test(
        "two changes of one object run in order, even when another owner made the second",
        arguments: Backend.allCases)
    func oneObjectInOrder(_ backend: Backend) async throws {
        try await withStorage(backend) { storage in
            let probe = OrderProbe()
            for index in 1...5 { try await storage.objectStore.insert(Self.post("a\(index)", by: "alice")) }
            // Bob updates alice's a5 after her five creates: his turn comes second, but a5's
            // create must run before his update of it.
            var updated = Self.post("a5", by: "bob")
            updated.version = 2
            updated.document = Array(#"{"guid":"a5","updatedBy":"bob","n":2}"#.utf8)
            try await storage.objectStore.update(updated, expectedVersion: 1, marking: nil)
            try await Self.dispatcher(storage, probe, concurrency: 1).dispatchRound()
            #expect(probe.order.withLock { $0 } == (1...5).map { "Count a\($0)" } + ["Count a5 update"])
        }
    }

    @Test(
        "a slowly failing handler does not hold other events back: they run beside it",
        arguments: Backend.allCases)
    func slowFailureRunsBeside(_ backend: Backend) async throws {
        try await withStorage(backend) { storage in
            let probe = OrderProbe(failing: ["Slow"])
            try await storage.objectStore.insert(Self.post("s1", by: "mallory", in: "Slow"))
            try await storage.objectStore.insert(Self.post("p1", by: "bob"))
            let dispatcher = Self.dispatcher(
                storage, probe, concurrency: 2, handlers: [Self.postHandler, Self.slowHandler])
            try await dispatcher.dispatchRound()
            // The two start in either order; the slow one ends only once the other has started.
            let order = probe.order.withLock { $0 }
            #expect(Set(order.prefix(2)) == ["Slow s1", "Count p1"])
            #expect(order.last == "Slow s1 ended")
            let failed = try await storage.scriptOutbox.failedRuns(limit: 10)
            #expect(failed.map(\.handler) == ["Slow"])
            #expect(try await storage.scriptOutbox.dispatchedThrough() == 2)
        }
    }

    @Test(
        "one round runs at most retriesPerRound due retries; the rest stay due for the next",
        arguments: Backend.allCases)
    func retryRoundIsBounded(_ backend: Backend) async throws {
        try await withStorage(backend) { storage in
            let probe = OrderProbe(failing: ["Count"])
            for index in 1...20 { try await storage.objectStore.insert(Self.post("a\(index)", by: "alice")) }
            let dispatcher = Self.dispatcher(storage, probe, concurrency: 3, retriesPerRound: 6)
            try await dispatcher.dispatchRound()
            #expect(probe.order.withLock { $0 }.count == 20)
            probe.now.withLock { $0 += 1_000 }
            probe.order.withLock { $0 = [] }
            #expect(try await dispatcher.dispatchRound())
            #expect(probe.order.withLock { $0 }.count == 6)
            let failed = try await storage.scriptOutbox.failedRuns(limit: 100)
            #expect(failed.filter { $0.attempts == 2 }.count == 6)
            #expect(failed.filter { $0.attempts == 1 }.count == 14)
        }
    }
}
