import Foundation
import Synchronization
import Testing

@testable import RoostThreads

/// A gate a test opens once: jobs blocked on it hold their thread until then.
final class Gate: Sendable {
    private let semaphore = DispatchSemaphore(value: 0)
    private let entered = DispatchSemaphore(value: 0)

    /// Called by a job: says it started, then blocks until ``open()``.
    func pass() {
        entered.signal()
        semaphore.wait()
    }

    /// Waits (off the cooperative pool) until a job has started.
    func waitForEntry() async {
        await withCheckedContinuation { continuation in
            Thread.detachNewThread {
                self.entered.wait()
                continuation.resume()
            }
        }
    }

    func open(_ count: Int = 1) {
        for _ in 0..<count { semaphore.signal() }
    }
}

/// A value tasks and threads share.
final class Shared<Value: Sendable>: Sendable {
    private let value: Mutex<Value>
    init(_ value: Value) { self.value = Mutex(value) }
    func withLock<T: Sendable>(_ body: (inout Value) -> T) -> T { value.withLock { body(&$0) } }
}

@Suite("Thread pool")
struct ThreadPoolTests {
    /// The error a job submitted now is refused with (nil when it ran).
    func refusal(of pool: ThreadPool<Void>, waitingLimit: Int? = nil) async -> (any Error)? {
        do {
            _ = try await pool.run(waitingLimit: waitingLimit) { 1 }
            return nil
        } catch {
            return error
        }
    }

    @Test("idle until its first job, runs work on its own threads, and returns the result")
    func startAndRun() async throws {
        let pool = ThreadPool(name: "test-run", threads: 2)
        #expect(pool.state == .idle)
        let inPool = try await pool.run { pool.isCurrentThreadInPool }
        #expect(pool.state == .running)
        #expect(inPool)
        #expect(!pool.isCurrentThreadInPool)
        await pool.shutdown()
        #expect(pool.state == .stopped)
    }

    @Test("errors thrown by the work reach the caller")
    func throwingWork() async {
        struct Boom: Error {}
        let pool = ThreadPool(name: "test-throw", threads: 1)
        await #expect(throws: Boom.self) { try await pool.run { throw Boom() } }
        await pool.shutdown()
    }

    @Test("a job queued without waiting runs; none is taken once the pool stops")
    func execute() async throws {
        let pool = ThreadPool(name: "test-execute", threads: 1)
        let ran = Shared(false)
        #expect(pool.execute { _ in ran.withLock { $0 = true } })
        await pool.shutdown()
        #expect(ran.withLock { $0 })
        #expect(!pool.execute { _ in })
    }

    @Test("each thread owns its resource: made at start, lent to each job, released at the end")
    func perThreadResource() async throws {
        let released = Shared<[Int]>([])
        let pool = ThreadPool<[Int]>(
            name: "test-resource", threads: 1, makeResource: { index in [index] },
            releaseResource: { _, resource in released.withLock { $0 = resource } })
        for value in 1...3 {
            _ = try await pool.run { resource in resource.append(value) }
        }
        await pool.shutdown()
        #expect(released.withLock { $0 } == [0, 1, 2, 3])
    }

    @Test("shutdown waits for the job running and those waiting, then refuses more")
    func gracefulShutdown() async throws {
        let pool = ThreadPool(name: "test-shutdown", threads: 1)
        let gate = Gate()
        let finished = Shared(0)
        let running = Task {
            try await pool.run {
                gate.pass(); finished.withLock { $0 += 1 }
            }
        }
        await gate.waitForEntry()
        let waiting = Task { try await pool.run { finished.withLock { $0 += 1 } } }
        while pool.waiting == 0 { await Task.yield() }
        let shutdown = Task { await pool.shutdown() }
        while pool.state != .stopping { await Task.yield() }
        #expect(await refusal(of: pool) is ThreadPool<Void>.Stopped)
        gate.open()
        await shutdown.value
        #expect(pool.state == .stopped)
        #expect(finished.withLock { $0 } == 2)
        try await running.value
        try await waiting.value
    }

    @Test("a caller cancelled before its job starts gets CancellationError and the job never runs")
    func cancellation() async throws {
        let pool = ThreadPool(name: "test-cancel", threads: 1)
        let gate = Gate()
        let ran = Shared(false)
        let blocker = Task { try await pool.run { gate.pass() } }
        await gate.waitForEntry()
        let cancelled = Task { try await pool.run { ran.withLock { $0 = true } } }
        while pool.waiting == 0 { await Task.yield() }
        cancelled.cancel()
        await #expect(throws: CancellationError.self) { try await cancelled.value }
        #expect(pool.waiting == 0)
        // One that ignores cancellation still runs.
        let kept = Task { try await pool.run(ignoringCancellation: true) { ran.withLock { $0 = true } } }
        while pool.waiting == 0 { await Task.yield() }
        kept.cancel()
        gate.open()
        try await blocker.value
        try await kept.value
        #expect(ran.withLock { $0 })
        await pool.shutdown()
    }

    @Test("with a waiting limit, one job too many is refused at once")
    func waitingLimit() async throws {
        let pool = ThreadPool(name: "test-limit", threads: 1)
        let gate = Gate()
        let blocker = Task { try await pool.run { gate.pass() } }
        await gate.waitForEntry()
        let waiting = Task { try await pool.run(waitingLimit: 1) { 1 } }
        while pool.waiting == 0 { await Task.yield() }
        #expect(await refusal(of: pool, waitingLimit: 1) is ThreadPool<Void>.QueueFull)
        gate.open()
        try await blocker.value
        #expect(try await waiting.value == 1)
        await pool.shutdown()
    }

    @Test("work for every thread reaches each thread's own resource")
    func eachThread() async throws {
        let seen = Shared<Set<Int>>([])
        let pool = ThreadPool<Int>(name: "test-each", threads: 3, makeResource: { $0 })
        pool.runOnEachThread { index in _ = seen.withLock { $0.insert(index) } }
        await pool.shutdown()
        #expect(seen.withLock { $0 } == [0, 1, 2])
    }

    @Test("a tick runs while the threads wait, and a pool never started stops at once")
    func tickAndIdleShutdown() async throws {
        let ticks = Shared(0)
        let reached = AsyncStream<Void>.makeStream()
        let pool = ThreadPool(
            name: "test-tick", threads: 1,
            tick: (
                interval: 0.01,
                work: { _ in
                    if ticks.withLock({
                        $0 += 1; return $0
                    }) == 3 {
                        reached.continuation.yield()
                    }
                }
            ))
        pool.start()
        for await _ in reached.stream { break }
        await pool.shutdown()
        #expect(ticks.withLock { $0 } >= 3)
        let idle = ThreadPool(name: "test-idle", threads: 1)
        await idle.shutdown()
        #expect(idle.state == .stopped)
    }

    @Test("a nice level applies to the pool's threads only")
    func niceLevel() async throws {
        let pool = ThreadPool(name: "test-nice", threads: 1, niceLevel: 19)
        let inside = try await pool.run { getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0) }
        #expect(inside == 19)
        #expect(getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0) != 19)
        await pool.shutdown()
    }
}

@Suite("Thread pool: abandoning, retiring, counters, idle work, owned threads")
struct ThreadPoolLifecycleTests {
    struct Closed: Error, Equatable {}

    @Test("shutdown abandoning waiting jobs fails them with the error given; the running one finishes")
    func abandoningShutdown() async throws {
        let pool = ThreadPool(name: "test-abandon", threads: 1)
        let gate = Gate()
        let ran = Shared(0)
        let running = Task {
            try await pool.run {
                gate.pass(); ran.withLock { $0 += 1 }
            }
        }
        await gate.waitForEntry()
        let waiting = Task { try await pool.run { ran.withLock { $0 += 1 } } }
        while pool.waiting == 0 { await Task.yield() }
        let shutdown = Task { await pool.shutdown(abandoningWaiting: Closed()) }
        await #expect(throws: Closed.self) { try await waiting.value }
        gate.open()
        await shutdown.value
        try await running.value
        #expect(ran.withLock { $0 } == 1)
        #expect(pool.state == .stopped)
    }

    @Test("a thread retires after a job that asks it to, and the next job starts one in its place")
    func retiringThread() async throws {
        let retired = DispatchSemaphore(value: 0)
        let made = Shared(0)
        let released = Shared(0)
        // The resource says whether its thread should retire after the job it just ran.
        let pool = ThreadPool<Bool>(
            name: "test-retire", threads: 1, retiresThread: { $0 },
            makeResource: { _ in
                made.withLock { $0 += 1 }
                return false
            },
            releaseResource: { _, _ in
                released.withLock { $0 += 1 }
                retired.signal()
            })
        try await pool.run { retiring in retiring = true }
        // The thread retires after its job has answered: a job submitted before then is run by
        // that last thread itself (none would start one in its place), so wait for the retirement.
        await withCheckedContinuation { continuation in
            Thread.detachNewThread {
                retired.wait()
                continuation.resume()
            }
        }
        try await pool.run { _ in }
        // A second resource is a second thread (comparing pthread_t proves nothing: a new thread
        // may reuse the handle of one that ended, and under load often did).
        #expect(made.withLock { $0 } == 2)
        await pool.shutdown()
        #expect(released.withLock { $0 } == 2)
        #expect(pool.state == .stopped)
    }

    @Test("running and started count the jobs on the threads")
    func counters() async throws {
        let pool = ThreadPool(name: "test-count", threads: 1)
        let gate = Gate()
        #expect(pool.running == 0)
        let blocker = Task { try await pool.run { gate.pass() } }
        await gate.waitForEntry()
        #expect(pool.running == 1)
        #expect(pool.started == 1)
        gate.open()
        try await blocker.value
        _ = try await pool.run { 1 }
        #expect(pool.started == 2)
        while pool.running != 0 { await Task.yield() }
        await pool.shutdown()
    }

    @Test("idle work runs once a thread has had no job for the interval, again after each job")
    func idleWork() async throws {
        let idled = AsyncStream<Int>.makeStream()
        let count = Shared(0)
        let pool = ThreadPool(
            name: "test-idle-work", threads: 1,
            idle: (
                after: 0.01,
                work: { _ in
                    idled.continuation.yield(
                        count.withLock {
                            $0 += 1; return $0
                        })
                }
            ))
        pool.start()
        var events = idled.stream.makeAsyncIterator()
        #expect(await events.next() == 1)
        _ = try await pool.run { 1 }
        #expect(await events.next() == 2)
        await pool.shutdown()
    }

    @Test("an owned thread runs under its name, knows itself, and is joined without blocking")
    func ownedThread() async throws {
        let seen = Shared<(String?, Bool)>((nil, false))
        let release = Gate()
        let thread = OwnedThread(name: "test-owned") { current in
            seen.withLock { $0 = (Thread.current.name, current.isCurrent) }
            release.pass()
        }
        await release.waitForEntry()
        #expect(!thread.isCurrent)
        release.open()
        await thread.join()
        await thread.join()
        #expect(seen.withLock { $0.0 } == "test-owned")
        #expect(seen.withLock { $0.1 })
    }
}
