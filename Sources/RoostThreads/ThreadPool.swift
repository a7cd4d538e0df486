import Foundation
import Synchronization

/// A fixed number of threads that run blocking work (hashing, file I/O, child processes) for
/// async callers, so that neither Swift's cooperative threads nor the event loops ever block.
///
/// Jobs run in the order they were submitted. Each thread may own a `Resource` (a connection, a
/// worker process) that only it touches: made when the thread starts, handed to every job it
/// runs, released when it ends. The pool is ``State/idle`` until ``start()`` or its first job;
/// ``shutdown()`` lets every job already submitted run, then waits until the threads have ended.
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

    public let name: String
    public let threadCount: Int
    /// The threads' nice level (0 keeps the process's; 19 is the lowest priority).
    public let niceLevel: Int32
    private let makeResource: @Sendable (Int) -> Resource
    private let releaseResource: @Sendable (Int, inout Resource) -> Void
    /// Work each thread does every `interval` seconds while it waits for jobs.
    private let tick: (interval: Double, work: @Sendable (inout Resource) -> Void)?
    private let nextJobID = Atomic<UInt64>(0)

    private let condition = NSCondition()
    // Guarded by `condition`.
    private var currentState = State.idle
    private var jobs: [Job] = []
    /// Jobs for one thread each (``runOnEachThread(_:)``), taken when it has no other.
    private var threadJobs: [[Job]]
    private var liveThreads = 0
    private var stopWaiters: [CheckedContinuation<Void, Never>] = []
    private var threadIDs: [pthread_t] = []

    /// `threads` threads named `name-0`, `name-1`… at nice level `niceLevel`. Each makes its
    /// resource with `makeResource(index)` and releases it with `releaseResource` when it ends;
    /// with a `tick`, each runs `tick.work` every `tick.interval` seconds.
    public init(
        name: String, threads: Int, niceLevel: Int32 = 0,
        tick: (interval: Double, work: @Sendable (inout Resource) -> Void)? = nil,
        makeResource: @escaping @Sendable (Int) -> Resource,
        releaseResource: @escaping @Sendable (Int, inout Resource) -> Void = { _, _ in }
    ) {
        self.name = name
        threadCount = max(1, threads)
        self.niceLevel = niceLevel
        self.tick = tick
        self.makeResource = makeResource
        self.releaseResource = releaseResource
        threadJobs = Array(repeating: [], count: max(1, threads))
    }

    public var state: State { condition.withLock { currentState } }

    /// Jobs submitted and not yet started.
    public var waiting: Int { condition.withLock { jobs.count } }

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
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            condition.lock()
            switch currentState {
            case .idle, .stopped:
                currentState = .stopped
                condition.unlock()
                continuation.resume()
            case .running, .stopping:
                currentState = .stopping
                stopWaiters.append(continuation)
                condition.broadcast()
                condition.unlock()
            }
        }
    }

    /// Asks the threads to end once the jobs submitted have run, without waiting for them: for
    /// an owner going away in `deinit`.
    public func beginShutdown() {
        condition.withLock {
            if currentState == .idle { currentState = .stopped }
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
            jobs.append(job)
            condition.signal()
            return nil
        }
    }

    /// Drops a job that has not started (its caller was cancelled).
    private func drop(_ id: UInt64) {
        let dropped = condition.withLock { () -> Job? in
            guard let index = jobs.firstIndex(where: { $0.id == id }) else { return nil }
            return jobs.remove(at: index)
        }
        dropped?.cancel(CancellationError())
    }

    private func startLocked() {
        guard currentState == .idle else { return }
        currentState = .running
        liveThreads = threadCount
        for index in 0..<threadCount {
            let thread = Thread { [self] in work(index: index) }
            thread.name = "\(name)-\(index)"
            thread.start()
        }
    }

    /// Names the calling thread for `ps`, `top` and debuggers (the kernel keeps 15 bytes).
    static func nameCurrentThread(_ name: String) {
        Thread.current.name = name
        #if os(Linux)
            // What pthread_setname_np does (Glibc's module does not export it): the kernel's name
            // of the calling thread is its /proc comm file.
            if let file = fopen("/proc/thread-self/comm", "w") {
                fputs(String(decoding: name.utf8.prefix(15), as: UTF8.self), file)
                fclose(file)
            }
        #endif
    }

    /// One thread's life: its resource, then jobs until the pool stops and none waits.
    private func work(index: Int) {
        // Named from inside, with the kernel's own call: Foundation's setter on Linux names the
        // kernel thread only once the parent has stored the new thread's handle, which under load
        // came after the first job ran (the job saw the creating thread's name).
        Self.nameCurrentThread("\(name)-\(index)")
        if niceLevel != 0 { lowerPriority(to: niceLevel) }
        condition.withLock { threadIDs.append(pthread_self()) }
        var resource = makeResource(index)
        var lastTick = Date()
        condition.lock()
        while true {
            if !jobs.isEmpty || !threadJobs[index].isEmpty {
                let job = jobs.isEmpty ? threadJobs[index].removeFirst() : jobs.removeFirst()
                condition.unlock()
                job.run(&resource)
                condition.lock()
                continue
            }
            if currentState == .stopping { break }
            guard let tick else {
                condition.wait()
                continue
            }
            let due = lastTick.addingTimeInterval(tick.interval)
            if Date() >= due {
                condition.unlock()
                tick.work(&resource)
                lastTick = Date()
                condition.lock()
            } else {
                _ = condition.wait(until: due)
            }
        }
        condition.unlock()
        releaseResource(index, &resource)
        let waiters = condition.withLock { () -> [CheckedContinuation<Void, Never>] in
            threadIDs.removeAll { pthread_equal($0, pthread_self()) != 0 }
            liveThreads -= 1
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
        tick: (interval: Double, work: @Sendable (inout Void) -> Void)? = nil
    ) {
        self.init(name: name, threads: threads, niceLevel: niceLevel, tick: tick, makeResource: { _ in () })
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
