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

/// What the pool's threads take work from: jobs, and requests to load new modules ahead of need.
/// Jobs are taken in turn per owner (a user, or an address; see ``ScriptInvocation/owner``), each
/// owner's in arrival order, so one owner's burst waits behind itself, not in front of everyone
/// else; while only one owner has jobs, it has every worker. Blocking, for the pool's threads only.
final class ScriptJobQueue: @unchecked Sendable {
    enum Work {
        case job(ScriptJob)
        case warm
    }

    private let condition = NSCondition()
    // Guarded by `condition`.
    /// Each owner's waiting jobs, in arrival order.
    private var queues: [String: [ScriptJob]] = [:]
    /// Each owner's committed jobs past its limit (see ``ScriptInvocation/committed``), in
    /// arrival order: one joins the owner's queue each time the owner's turn takes a job.
    private var parked: [String: [ScriptJob]] = [:]
    /// Owners with waiting jobs, in the order they take turns; `turn` is whose is next.
    private var rotation: [String] = []
    private var turn = 0
    private var count = 0
    private var warmSlots: Set<Int> = []
    private var current = ScriptModules()
    private var stopped = false
    private let slots: Int

    init(slots: Int) { self.slots = slots }

    var modules: ScriptModules { condition.withLock { current } }
    var isStopped: Bool { condition.withLock { stopped } }
    /// Jobs waiting for a worker.
    var waiting: Int { condition.withLock { count } }

    enum Admission {
        case queued
        /// `limit` jobs wait already (or the pool is stopping).
        case busy
        /// `ownerLimit` of the owner's jobs wait already.
        case ownerFull
    }

    /// Queues a job unless `limit` wait already, or `ownerLimit` of its owner's (or the pool is
    /// stopping). A committed job is never refused for either: past its owner's limit it waits
    /// behind the owner's queue, so it still counts once against the shared one.
    func enqueue(_ job: ScriptJob, limit: Int, ownerLimit: Int) -> Admission {
        condition.withLock {
            let owner = job.invocation.owner
            let mine = queues[owner]?.count ?? 0
            if stopped { return .busy }
            if job.invocation.committed {
                if mine >= ownerLimit {
                    parked[owner, default: []].append(job)
                    return .queued
                }
            } else {
                guard mine < ownerLimit else { return .ownerFull }
                guard count < limit else { return .busy }
            }
            if mine == 0 { rotation.append(owner) }
            queues[owner, default: []].append(job)
            count += 1
            condition.signal()
            return .queued
        }
    }

    /// The next owner's first job; guarded by `condition`.
    private func takeJob() -> ScriptJob? {
        guard !rotation.isEmpty else { return nil }
        if turn >= rotation.count { turn = 0 }
        let owner = rotation[turn]
        // Taken out of the table while it changes, so the array is not copied.
        var mine = queues.removeValue(forKey: owner) ?? []
        let job = mine.removeFirst()
        count -= 1
        if var waiting = parked.removeValue(forKey: owner) {
            // The owner's first parked job takes the place just freed, behind the owner's others.
            mine.append(waiting.removeFirst())
            count += 1
            if !waiting.isEmpty { parked[owner] = waiting }
        }
        if mine.isEmpty {
            rotation.remove(at: turn)
        } else {
            queues[owner] = mine
            turn += 1
        }
        return job
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
                if let job = takeJob() { return .job(job) }
                if warmSlots.remove(slot) != nil { return .warm }
                condition.wait()
            }
        }
    }

    /// Stops the pool: returns the jobs that never started.
    func stop() -> [ScriptJob] {
        condition.withLock {
            stopped = true
            let pending = rotation.flatMap { queues[$0] ?? [] } + parked.values.flatMap { $0 }
            queues = [:]
            parked = [:]
            rotation = []
            count = 0
            condition.broadcast()
            return pending
        }
    }
}
