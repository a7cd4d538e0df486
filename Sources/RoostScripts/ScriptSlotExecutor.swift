import Foundation
import RoostScriptProtocol

/// A pool thread as a task executor: while its script waits for an `ff` call, the thread runs
/// the call's task itself, so the call starts without waking another thread and resumes here
/// when its data arrives (measured: two thread switches fewer per call). Jobs run only inside
/// ``run(until:_:)`` on the owning slot thread; one that arrives at any other time (from a call
/// that outlived its script) goes to Swift's global executor, so nothing ever waits on a slot
/// that is busy with something else.
final class ScriptSlotExecutor: TaskExecutor, @unchecked Sendable {
    private let condition = NSCondition()
    // Guarded by `condition`.
    private var jobs: [UnownedJob] = []
    private var running = false

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let taken = condition.withLock {
            guard running else { return false }
            jobs.append(job)
            condition.signal()
            return true
        }
        if !taken { globalConcurrentExecutor.enqueue(ExecutorJob(job)) }
    }

    /// Starts `work` on this executor and runs its jobs on the calling thread until it
    /// finishes, or until `deadline` (`CLOCK_MONOTONIC` nanoseconds): then it is cancelled, goes
    /// on on the global executor, and the answer is nil.
    func run<Value: Sendable>(until deadline: UInt64, _ work: @escaping @Sendable () async -> Value) -> Value?
    {
        let outcome = Outcome<Value>()
        condition.withLock { running = true }
        let task = Task(executorPreference: self) {
            let value = await work()
            self.condition.withLock {
                outcome.value = value
                self.condition.signal()
            }
        }
        while true {
            // One decision under the lock: the result ends the run (jobs still queued, from a call
            // abandoned earlier, and any later ones go to the global executor); past the deadline,
            // the call is given up.
            let next: Next<Value> = condition.withLock {
                while true {
                    if let value = outcome.value {
                        running = false
                        defer { jobs = [] }
                        return .finished(value, left: jobs)
                    }
                    let now = ScriptChannel.monotonicNanoseconds()
                    guard now < deadline else { return .timedOut }
                    if !jobs.isEmpty {
                        defer { jobs = [] }
                        return .run(jobs)
                    }
                    _ = condition.wait(
                        until: Date(timeIntervalSinceNow: min(Double(deadline - now) / 1e9, 60)))
                }
            }
            switch next {
            case .finished(let value, let left):
                for job in left { globalConcurrentExecutor.enqueue(ExecutorJob(job)) }
                return value
            case .timedOut: break
            case .run(let batch):
                for job in batch { job.runSynchronously(on: asUnownedTaskExecutor()) }
                continue
            }
            break
        }
        task.cancel()
        let left = condition.withLock {
            running = false
            defer { jobs = [] }
            return jobs
        }
        for job in left { globalConcurrentExecutor.enqueue(ExecutorJob(job)) }
        return nil
    }
}

/// What the waiting thread does next.
private enum Next<Value> {
    case finished(Value, left: [UnownedJob])
    case timedOut
    case run([UnownedJob])
}

/// What a run's task produced; guarded by its executor's condition.
private final class Outcome<Value: Sendable>: @unchecked Sendable {
    var value: Value?
}
