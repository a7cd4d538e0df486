import Foundation
import Synchronization

/// A fixed number of threads that run blocking work (hashing, file I/O, child processes) for
/// async callers, so that neither Swift's cooperative threads nor the event loops ever block.
///
/// Jobs run in the order they were submitted. Each thread may own a `Resource` (a connection, a
/// worker process) that only it touches: made when the thread starts, handed to every job it
/// runs, released when it ends. The pool is ``State/idle`` until ``start()`` or its first job;
/// ``shutdown()`` lets every job already submitted run, then waits until the threads have ended
/// (``shutdown(abandoningWaiting:)`` fails those not started instead). A thread may retire after a
/// job (``init(name:threads:niceLevel:tick:idle:retiresThread:makeResource:releaseResource:)``);
/// the next job submitted starts one in its place.
// @unchecked Sendable: every mutable property is guarded by `condition`; each thread's resource
// never leaves that thread.
public final class ThreadPool<Resource>: @unchecked Sendable {
    public enum State: Sendable, Equatable {
        /// No thread started yet.
        case idle
        case running
        /// ``shutdown()`` was asked: no job is taken any more; those submitted still run.
        case stopping
        /// Every thread has ended and released its resource.
        case stopped
    }

    /// Thrown by ``run(waitingLimit:ignoringCancellation:_:)`` once the pool is stopping.
    public struct Stopped: Error, Sendable, Equatable {}

    /// Thrown by ``run(waitingLimit:ignoringCancellation:_:)`` when the limit of waiting jobs is
    /// reached.
    public struct QueueFull: Error, Sendable, Equatable {}

    private struct Job {
        let id: UInt64
        let run: (inout Resource) -> Void
        /// Called instead of `run` when the job is dropped before it starts.
        let cancel: (any Error) -> Void
    }

    /// Jobs in submission order; taking one is O(1): a head index, compacted now and then.
    private struct JobQueue {
        private var jobs: [Job] = []
        private var head = 0

        var count: Int { jobs.count - head }
        var isEmpty: Bool { head == jobs.count }

        mutating func append(_ job: Job) { jobs.append(job) }

        mutating func removeFirst() -> Job {
            let job = jobs[head]
            head += 1
            if head == jobs.count {
                jobs.removeAll(keepingCapacity: true)
                head = 0
            } else if head > 64, head * 2 > jobs.count {
                jobs.removeFirst(head)
                head = 0
            }
            return job
        }

        mutating func remove(id: UInt64) -> Job? {
            guard let index = jobs[head...].firstIndex(where: { $0.id == id }) else { return nil }
            return jobs.remove(at: index)
        }

        mutating func removeAll() -> [Job] {
            defer {
                jobs = []
                head = 0
            }
            return Array(jobs[head...])
        }
    }

    public let name: String
    public let threadCount: Int
    /// The threads' nice level (0 keeps the process's; 19 is the lowest priority).
    public let niceLevel: Int32
    private let makeResource: @Sendable (Int) -> Resource
    private let releaseResource: @Sendable (Int, inout Resource) -> Void
    /// Work each thread does every `interval` seconds while it waits for jobs.
    private let tick: (interval: Double, work: @Sendable (inout Resource) -> Void)?
    /// Work a thread does once it has had no job for `after` seconds (once per such wait).
    private let idle: (after: Double, work: @Sendable (inout Resource) -> Void)?
    /// Asked after each job: true ends the thread, to be replaced by the next job submitted.
    private let retiresThread: (@Sendable (inout Resource) -> Bool)?
    private let nextJobID = Atomic<UInt64>(0)

    private let condition = NSCondition()
    // Guarded by `condition`.
    private var currentState = State.idle
    private var jobs = JobQueue()
    /// Jobs for one thread each (``runOnEachThread(_:)``), taken when it has no other.
    private var threadJobs: [[Job]]
    private var liveThreads = 0
    private var runningJobs = 0
    private var startedJobs = 0
    /// Indices of threads that retired, started again by the next job submitted.
    private var retiredThreads: [Int] = []
    private var stopWaiters: [CheckedContinuation<Void, Never>] = []
    private var threadIDs: [pthread_t] = []

    /// `threads` threads named `name-0`, `name-1`… at nice level `niceLevel`. Each makes its
    /// resource with `makeResource(index)` and releases it with `releaseResource` when it ends;
    /// with a `tick`, each runs `tick.work` every `tick.interval` seconds; with `idle`, each runs
    /// `idle.work` once it has had no job for `idle.after` seconds. When `retiresThread` says so
    /// after a job, that thread ends (unless it is the last and jobs wait) and the next job
    /// submitted starts a new one from the submitter's thread, so at the submitter's priority.
    public init(
        name: String, threads: Int, niceLevel: Int32 = 0,
        tick: (interval: Double, work: @Sendable (inout Resource) -> Void)? = nil,
        idle: (after: Double, work: @Sendable (inout Resource) -> Void)? = nil,
        retiresThread: (@Sendable (inout Resource) -> Bool)? = nil,
        makeResource: @escaping @Sendable (Int) -> Resource,
        releaseResource: @escaping @Sendable (Int, inout Resource) -> Void = { _, _ in }
    ) {
        self.name = name
        threadCount = max(1, threads)
        self.niceLevel = niceLevel
        self.tick = tick
        self.idle = idle
        self.retiresThread = retiresThread
        self.makeResource = makeResource
        self.releaseResource = releaseResource
        threadJobs = Array(repeating: [], count: max(1, threads))
    }

    public var state: State { condition.withLock { currentState } }

    /// Jobs submitted and not yet started.
    public var waiting: Int { condition.withLock { jobs.count } }

    /// Jobs running on a thread now.
    public var running: Int { condition.withLock { runningJobs } }

    /// Jobs the threads have taken so far.
    public var started: Int { condition.withLock { startedJobs } }

    /// Whether the calling thread is one of the pool's.
    public var isCurrentThreadInPool: Bool {
        let me = pthread_self()
        return condition.withLock { threadIDs.contains { pthread_equal($0, me) != 0 } }
    }

    /// Starts the threads (once; later calls do nothing).
    public func start() {
        condition.withLock { startLocked() }
    }

    /// Runs `work` on a thread of the pool and returns its result. With a `waitingLimit`, throws
    /// ``QueueFull`` at once when that many jobs wait already; throws ``Stopped`` once the pool
    /// stops. A caller cancelled before its job started gets `CancellationError` and the job
    /// never runs, unless `ignoringCancellation`.
    public func run<T: Sendable>(
        waitingLimit: Int? = nil, ignoringCancellation: Bool = false,
        _ work: @escaping @Sendable (inout Resource) throws -> T
    ) async throws -> T {
        let id = nextJobID.add(1, ordering: .relaxed).newValue
        let submit = { (continuation: CheckedContinuation<T, any Error>) in
            let job = Job(
                id: id, run: { resource in continuation.resume(with: Result { try work(&resource) }) },
                cancel: { continuation.resume(throwing: $0) })
            if let refusal = self.submit(job, waitingLimit: waitingLimit) {
                continuation.resume(throwing: refusal)
            }
        }
        if ignoringCancellation { return try await withCheckedThrowingContinuation(submit) }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                guard !Task.isCancelled else { return continuation.resume(throwing: CancellationError()) }
                submit(continuation)
            }
        } onCancel: {
            drop(id)
        }
    }

    /// Queues `work` without waiting for it: for an owner with its own queue, whose jobs each
    /// such call takes one of. False when the pool is stopping.
    @discardableResult
    public func execute(_ work: @escaping @Sendable (inout Resource) -> Void) -> Bool {
        submit(Job(id: 0, run: work, cancel: { _ in }), waitingLimit: nil) == nil
    }

    /// Queues `work` for every thread, each with its own resource, run when it has no other job
    /// (loading new code into each thread's worker, say). Nothing when the pool is stopping.
    public func runOnEachThread(_ work: @escaping @Sendable (inout Resource) -> Void) {
        condition.withLock {
            guard currentState == .idle || currentState == .running else { return }
            startLocked()
            for index in threadJobs.indices {
                threadJobs[index].append(Job(id: 0, run: work, cancel: { _ in }))
            }
            condition.broadcast()
        }
    }

    /// Lets the jobs submitted run, then ends the threads (each releasing its resource); returns
    /// once they all have. Jobs submitted from now on throw ``Stopped``.
    public func shutdown() async {
        await shutdown(abandoning: nil)
    }

    /// Fails the jobs not started yet with `error`, lets those running finish, then ends the
    /// threads and returns once they all have. Jobs submitted from now on throw ``Stopped``.
    public func shutdown(abandoningWaiting error: any Error) async {
        await shutdown(abandoning: error)
    }

    private func shutdown(abandoning error: (any Error)?) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            condition.lock()
            var abandoned: [Job] = []
            if error != nil {
                abandoned = jobs.removeAll()
                for index in threadJobs.indices { abandoned += threadJobs[index] }
                threadJobs = Array(repeating: [], count: threadCount)
            }
            switch currentState {
            case .idle, .stopped:
                currentState = .stopped
                condition.unlock()
                continuation.resume()
            case .running, .stopping:
                currentState = .stopping
                if liveThreads == 0 {
                    // Every thread retired (and so no job waits).
                    currentState = .stopped
                    condition.unlock()
                    continuation.resume()
                } else {
                    stopWaiters.append(continuation)
                    condition.broadcast()
                    condition.unlock()
                }
            }
            if let error { for job in abandoned { job.cancel(error) } }
        }
    }

    /// Asks the threads to end once the jobs submitted have run, without waiting for them: for
    /// an owner going away in `deinit`.
    public func beginShutdown() {
        condition.withLock {
            if currentState == .idle || (currentState == .running && liveThreads == 0) {
                currentState = .stopped
            }
            if currentState == .running { currentState = .stopping }
            condition.broadcast()
        }
    }

    // MARK: Internals

    /// Queues a job; the error that refuses it otherwise.
    private func submit(_ job: Job, waitingLimit: Int?) -> (any Error)? {
        condition.withLock {
            guard currentState == .idle || currentState == .running else { return Stopped() }
            if let waitingLimit, jobs.count >= waitingLimit { return QueueFull() }
            startLocked()
            // Started here, on the submitter's thread: a thread inherits its creator's priority.
            while let index = retiredThreads.popLast() { startThreadLocked(index) }
            jobs.append(job)
            condition.signal()
            return nil
        }
    }

    /// Drops a job that has not started (its caller was cancelled).
    private func drop(_ id: UInt64) {
        let dropped = condition.withLock { () -> Job? in
            jobs.remove(id: id)
        }
        dropped?.cancel(CancellationError())
    }

    private func startLocked() {
        guard currentState == .idle else { return }
        currentState = .running
        for index in 0..<threadCount { startThreadLocked(index) }
    }

    private func startThreadLocked(_ index: Int) {
        liveThreads += 1
        startNamedThread("\(name)-\(index)") { [self] in work(index: index) }
    }

    /// One thread's life: its resource, then jobs until the pool stops and none waits, or until it
    /// retires.
    private func work(index: Int) {
        if niceLevel != 0 { lowerPriority(to: niceLevel) }
        condition.withLock { threadIDs.append(pthread_self()) }
        var resource = makeResource(index)
        var lastTick = Date()
        /// Since when the thread has had no job, while its idle work has not run for that wait.
        var idleSince: Date? = idle == nil ? nil : Date()
        var retiring = false
        condition.lock()
        while true {
            // The last thread stays while jobs wait: none would start one in its place.
            if retiring, jobs.isEmpty || liveThreads > 1 { break }
            if !jobs.isEmpty || !threadJobs[index].isEmpty {
                let job = jobs.isEmpty ? threadJobs[index].removeFirst() : jobs.removeFirst()
                runningJobs += 1
                startedJobs += 1
                condition.unlock()
                job.run(&resource)
                if let retiresThread, retiresThread(&resource) { retiring = true }
                if idle != nil { idleSince = Date() }
                condition.lock()
                runningJobs -= 1
                continue
            }
            if currentState == .stopping { break }
            if tick == nil, idleSince == nil {
                condition.wait()
                continue
            }
            let now = Date()
            var wakeAt = Date.distantFuture
            if let tick {
                let due = lastTick.addingTimeInterval(tick.interval)
                if now >= due {
                    condition.unlock()
                    tick.work(&resource)
                    lastTick = Date()
                    condition.lock()
                    continue
                }
                wakeAt = due
            }
            if let idle, let since = idleSince {
                let due = since.addingTimeInterval(idle.after)
                if now >= due {
                    idleSince = nil
                    condition.unlock()
                    idle.work(&resource)
                    condition.lock()
                    continue
                }
                wakeAt = min(wakeAt, due)
            }
            _ = condition.wait(until: wakeAt)
        }
        condition.unlock()
        releaseResource(index, &resource)
        let waiters = condition.withLock { () -> [CheckedContinuation<Void, Never>] in
            threadIDs.removeAll { pthread_equal($0, pthread_self()) != 0 }
            liveThreads -= 1
            if currentState == .running {
                retiredThreads.append(index)
                return []
            }
            guard liveThreads == 0 else { return [] }
            currentState = .stopped
            defer { stopWaiters = [] }
            return stopWaiters
        }
        for waiter in waiters { waiter.resume() }
    }
}

extension ThreadPool where Resource == Void {
    /// A pool whose threads own nothing.
    public convenience init(
        name: String, threads: Int, niceLevel: Int32 = 0,
        tick: (interval: Double, work: @Sendable (inout Void) -> Void)? = nil,
        idle: (after: Double, work: @Sendable (inout Void) -> Void)? = nil
    ) {
        self.init(
            name: name, threads: threads, niceLevel: niceLevel, tick: tick, idle: idle,
            makeResource: { _ in () })
    }

    /// ``run(waitingLimit:ignoringCancellation:_:)`` for work that needs no resource.
    public func run<T: Sendable>(
        waitingLimit: Int? = nil, ignoringCancellation: Bool = false,
        _ work: @escaping @Sendable () throws -> T
    ) async throws -> T {
        try await run(waitingLimit: waitingLimit, ignoringCancellation: ignoringCancellation) {
            (_: inout Void) in
            try work()
        }
    }
}

/// Sets the calling thread (not the process) to `level`: on Linux, `setpriority` with id 0
/// changes the calling thread only.
private func lowerPriority(to level: Int32) {
    #if os(Linux)
        setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, level)
    #else
        setpriority(PRIO_PROCESS, 0, level)
    #endif
}
