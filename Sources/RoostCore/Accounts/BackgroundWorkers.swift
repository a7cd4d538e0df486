import CRoostSystem
import Foundation
import Synchronization

/// A few low-priority threads for CPU-heavy work such as password hashing.
///
/// The threads run at the lowest scheduling priority (nice 19), so when the machine is busy the event
/// loops and request handlers get the CPU first and a burst of logins cannot starve other requests.
/// At most `queueLimit` jobs wait for a thread; ``runBounded(_:)`` refuses more at once, so a storm
/// costs neither unbounded memory nor unbounded waiting.
public final class BackgroundWorkers: Sendable {
    private final class Queue: Sendable {
        let jobs = Mutex<[@Sendable () -> Void]>([])
        let ready = DispatchSemaphore(value: 0)
        /// Set by ``stop()``; the threads end once the queue is empty, the last resumes the waiters.
        let lifecycle = Mutex<(stopping: Bool, running: Int, onStopped: [CheckedContinuation<Void, Never>])>(
            (false, 0, []))
        /// Kernel ids of the worker threads, so callers can check where they run.
        let threadIDs = Mutex<Set<Int>>([])
    }

    /// Thrown by ``runBounded(_:)`` when `queueLimit` jobs are waiting already.
    public struct QueueFull: Error, Sendable, Equatable {}

    private let queue = Queue()
    /// Jobs that may wait for a thread in ``runBounded(_:)``.
    public let queueLimit: Int
    /// Worker threads.
    public let threads: Int

    /// Jobs waiting for a password-hashing thread, beyond those running: at about 20 ms a hash,
    /// 64 waiting logins are answered within ~1.3 s per thread; later ones get 503 at once.
    public static let defaultHashingQueueLimit = 64

    /// Half the cores: logins still outpace bcrypt-based peers, and the rest of the server keeps
    /// the other half even during a login storm (each Argon2id hash also holds 19 MiB while it runs).
    public static let shared = BackgroundWorkers(
        threads: max(1, Foundation.ProcessInfo.processInfo.activeProcessorCount / 2), name: "roost-hashing",
        queueLimit: defaultHashingQueueLimit)

    /// `threads` workers; `lowPriority` runs them at nice 19 (CPU work), otherwise at normal
    /// priority (waiting on disks, which should not queue behind hashing). `queueLimit` bounds the
    /// jobs ``runBounded(_:)`` lets wait.
    public init(threads: Int, name: String, lowPriority: Bool = true, queueLimit: Int = .max) {
        self.threads = max(1, threads)
        self.queueLimit = max(0, queueLimit)
        queue.lifecycle.withLock { $0.running = self.threads }
        for index in 0..<self.threads {
            let threadName = "\(name)-\(index)"
            let thread = Thread { [queue] in
                queue.threadIDs.withLock { _ = $0.insert(roost_current_thread_id()) }
                if lowPriority { lowerThreadPriority() }
                while true {
                    queue.ready.wait()
                    let job = queue.jobs.withLock { $0.isEmpty ? nil : $0.removeFirst() }
                    guard let job else {
                        if queue.lifecycle.withLock({ $0.stopping }) { break }
                        continue
                    }
                    job()
                }
                let waiters = queue.lifecycle.withLock { state in
                    state.running -= 1
                    guard state.running == 0 else { return [CheckedContinuation<Void, Never>]() }
                    defer { state.onStopped = [] }
                    return state.onStopped
                }
                for waiter in waiters { waiter.resume() }
            }
            thread.name = threadName
            thread.start()
        }
    }

    /// Lets the queued jobs run, then ends the threads; returns once all have ended. Work handed
    /// over afterwards runs on the caller's thread.
    public func stop() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let (wasStopping, stopped) = queue.lifecycle.withLock { state in
                let wasStopping = state.stopping
                state.stopping = true
                if state.running > 0 { state.onStopped.append(continuation) }
                return (wasStopping, state.running == 0)
            }
            if !wasStopping { for _ in 0..<threads { queue.ready.signal() } }
            if stopped { continuation.resume() }
        }
    }

    private var isStopping: Bool { queue.lifecycle.withLock { $0.stopping } }

    /// Whether the calling thread is one of these workers.
    public var isCurrentThreadAWorker: Bool {
        queue.threadIDs.withLock { $0.contains(roost_current_thread_id()) }
    }

    /// Jobs waiting for a thread now (not those running).
    public var waiting: Int { queue.jobs.withLock { $0.count } }

    /// Runs `work` on a worker thread and returns its result.
    public func run<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
        if isStopping { return work() }
        return await withCheckedContinuation { continuation in
            queue.jobs.withLock { $0.append { continuation.resume(returning: work()) } }
            queue.ready.signal()
        }
    }

    /// Runs `work` on a worker thread, or throws ``QueueFull`` at once when `queueLimit` jobs are
    /// already waiting for a thread (jobs running on a thread do not count).
    public func runBounded<T: Sendable>(_ work: @escaping @Sendable () -> T) async throws -> T {
        if isStopping { return work() }
        return try await withCheckedThrowingContinuation { continuation in
            let accepted = queue.jobs.withLock { jobs in
                guard jobs.count < queueLimit else { return false }
                jobs.append { continuation.resume(returning: work()) }
                return true
            }
            if accepted {
                queue.ready.signal()
            } else {
                continuation.resume(throwing: QueueFull())
            }
        }
    }
}

/// Sets this thread (not the process) to nice 19: on Linux, setpriority takes a thread id.
private func lowerThreadPriority() {
    #if os(Linux)
        let threadID = roost_current_thread_id()
        if threadID > 0 { setpriority(__priority_which_t(PRIO_PROCESS.rawValue), id_t(threadID), 19) }
    #endif
}
