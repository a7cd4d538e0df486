import Foundation
import RoostThreads

/// A few low-priority threads for CPU-heavy work such as password hashing.
///
/// The threads run at the lowest scheduling priority (nice 19), so when the machine is busy the event
/// loops and request handlers get the CPU first and a burst of logins cannot starve other requests.
/// At most `queueLimit` jobs wait for a thread; ``runBounded(_:)`` refuses more at once, so a storm
/// costs neither unbounded memory nor unbounded waiting.
public final class BackgroundWorkers: Sendable {
    /// Thrown by ``runBounded(_:)`` when `queueLimit` jobs are waiting already.
    public struct QueueFull: Error, Sendable, Equatable {}

    private let pool: ThreadPool<Void>
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
        pool = ThreadPool(name: name, threads: self.threads, niceLevel: lowPriority ? 19 : 0)
        pool.start()
    }

    /// Lets the queued jobs run, then ends the threads; returns once all have ended. Work handed
    /// over afterwards runs on the caller's thread.
    public func stop() async {
        await pool.shutdown()
    }

    /// Whether the calling thread is one of these workers.
    public var isCurrentThreadAWorker: Bool { pool.isCurrentThreadInPool }

    /// Jobs waiting for a thread now (not those running).
    public var waiting: Int { pool.waiting }

    /// Runs `work` on a worker thread and returns its result.
    public func run<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
        do {
            return try await pool.run(ignoringCancellation: true, work)
        } catch {
            // Stopped: the caller's thread it is.
            return work()
        }
    }

    /// Runs `work` on a worker thread, or throws ``QueueFull`` at once when `queueLimit` jobs are
    /// already waiting for a thread (jobs running on a thread do not count).
    public func runBounded<T: Sendable>(_ work: @escaping @Sendable () -> T) async throws -> T {
        do {
            return try await pool.run(waitingLimit: queueLimit, ignoringCancellation: true, work)
        } catch is ThreadPool<Void>.QueueFull {
            throw QueueFull()
        } catch {
            return work()
        }
    }
}
