import CRoostSystem
import Foundation
import Synchronization

/// A few low-priority threads for CPU-heavy work such as password hashing.
///
/// The threads run at the lowest scheduling priority (nice 19), so when the machine is busy the event
/// loops and request handlers get the CPU first and a burst of logins cannot starve other requests.
public final class BackgroundWorkers: Sendable {
    private final class Queue: Sendable {
        let jobs = Mutex<[@Sendable () -> Void]>([])
        let ready = DispatchSemaphore(value: 0)
    }

    private let queue = Queue()

    /// Half the cores: logins still outpace bcrypt-based peers, and the rest of the server keeps
    /// the other half even during a login storm (each Argon2id hash also holds 19 MiB while it runs).
    public static let shared = BackgroundWorkers(
        threads: max(1, Foundation.ProcessInfo.processInfo.activeProcessorCount / 2), name: "roost-hashing")

    /// `threads` workers; `lowPriority` runs them at nice 19 (CPU work), otherwise at normal
    /// priority (waiting on disks, which should not queue behind hashing).
    public init(threads: Int, name: String, lowPriority: Bool = true) {
        for index in 0..<max(1, threads) {
            let thread = Thread { [queue] in
                if lowPriority { lowerThreadPriority() }
                while true {
                    queue.ready.wait()
                    let job = queue.jobs.withLock { $0.isEmpty ? nil : $0.removeFirst() }
                    job?()
                }
            }
            thread.name = "\(name)-\(index)"
            thread.start()
        }
    }

    /// Runs `work` on a worker thread and returns its result.
    public func run<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            queue.jobs.withLock { $0.append { continuation.resume(returning: work()) } }
            queue.ready.signal()
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
