import Foundation
import RoostJSON

/// An invocation waiting for, or running on, a worker.
struct ScriptJob: Sendable {
    let invocation: ScriptInvocation
    let calls: any ScriptCallHandling
    let continuation: CheckedContinuation<ScriptOutcome, any Error>
    /// `CLOCK_MONOTONIC` nanoseconds.
    let enqueuedAt: UInt64
}

/// The modules in force and their generation; a worker with another generation reloads first.
struct ScriptModules: Sendable {
    var modules: [String: String] = [:]
    var generation = 0
}

/// What the pool's threads take work from: jobs in arrival order, and requests to load new
/// modules ahead of need. Blocking, for the pool's own threads only.
final class ScriptJobQueue: @unchecked Sendable {
    enum Work {
        case job(ScriptJob)
        case warm
    }

    private let condition = NSCondition()
    // Guarded by `condition`.
    private var jobs: [ScriptJob] = []
    private var head = 0
    private var warmSlots: Set<Int> = []
    private var current = ScriptModules()
    private var stopped = false
    private let slots: Int

    init(slots: Int) { self.slots = slots }

    var modules: ScriptModules { condition.withLock { current } }
    var isStopped: Bool { condition.withLock { stopped } }
    /// Jobs waiting for a worker.
    var waiting: Int { condition.withLock { jobs.count - head } }

    /// Queues a job unless `limit` wait already (or the pool is stopping).
    func enqueue(_ job: ScriptJob, limit: Int) -> Bool {
        condition.withLock {
            guard !stopped, jobs.count - head < limit else { return false }
            jobs.append(job)
            condition.signal()
            return true
        }
    }

    /// Puts new modules in force and asks every slot to load them while idle.
    func replaceModules(_ modules: [String: String]) {
        condition.withLock {
            current = ScriptModules(modules: modules, generation: current.generation + 1)
            warmSlots = Set(0..<slots)
            condition.broadcast()
        }
    }

    /// The next work for `slot`, waiting for some; nil once the pool stops.
    func next(slot: Int) -> Work? {
        condition.withLock {
            while true {
                if stopped { return nil }
                if head < jobs.count {
                    let job = jobs[head]
                    head += 1
                    if head > 64 && head * 2 > jobs.count {
                        jobs.removeFirst(head)
                        head = 0
                    }
                    return .job(job)
                }
                if warmSlots.remove(slot) != nil { return .warm }
                condition.wait()
            }
        }
    }

    /// Stops the pool: returns the jobs that never started.
    func stop() -> [ScriptJob] {
        condition.withLock {
            stopped = true
            let pending = Array(jobs[head...])
            jobs = []
            head = 0
            condition.broadcast()
            return pending
        }
    }
}
