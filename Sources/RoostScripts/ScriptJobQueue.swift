import Foundation
import RoostJSON
import Synchronization

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

/// The invocations waiting for a worker, in the order the pool's threads take them: in turn per
/// owner (a user, or an address; see ``ScriptInvocation/owner``), each owner's in arrival order,
/// so one owner's burst waits behind itself, not in front of everyone else; while only one owner
/// has jobs, it has every worker. It never blocks: each job queued is matched by one job of the
/// runtime's thread pool, which takes whichever job is next here.
final class ScriptJobQueue: Sendable {
    private struct Schedule {
        /// Each owner's waiting jobs, in arrival order.
        var queues: [String: [ScriptJob]] = [:]
        /// Each owner's committed jobs past its limit (see ``ScriptInvocation/committed``), in
        /// arrival order: one joins the owner's queue each time the owner's turn takes a job.
        var parked: [String: [ScriptJob]] = [:]
        /// Owners with waiting jobs, in the order they take turns; `turn` is whose is next.
        var rotation: [String] = []
        var turn = 0
        var count = 0
        var current = ScriptModules()
        var stopped = false

        /// The next owner's first job.
        mutating func take() -> ScriptJob? {
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
    }

    private let schedule = Mutex(Schedule())

    var modules: ScriptModules { schedule.withLock { $0.current } }
    var isStopped: Bool { schedule.withLock { $0.stopped } }
    /// Jobs waiting for a worker.
    var waiting: Int { schedule.withLock { $0.count } }

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
        schedule.withLock { schedule in
            let owner = job.invocation.owner
            let mine = schedule.queues[owner]?.count ?? 0
            if schedule.stopped { return .busy }
            if job.invocation.committed {
                if mine >= ownerLimit {
                    schedule.parked[owner, default: []].append(job)
                    return .queued
                }
            } else {
                guard mine < ownerLimit else { return .ownerFull }
                guard schedule.count < limit else { return .busy }
            }
            if mine == 0 { schedule.rotation.append(owner) }
            schedule.queues[owner, default: []].append(job)
            schedule.count += 1
            return .queued
        }
    }

    /// The job whose turn it is; nil when none waits (the pool stopped meanwhile).
    func take() -> ScriptJob? {
        schedule.withLock { $0.take() }
    }

    /// Puts new modules in force.
    func replaceModules(_ modules: [String: String]) {
        schedule.withLock { schedule in
            schedule.current = ScriptModules(modules: modules, generation: schedule.current.generation + 1)
        }
    }

    /// Stops taking jobs: returns those that never started.
    func stop() -> [ScriptJob] {
        schedule.withLock { schedule in
            schedule.stopped = true
            let pending =
                schedule.rotation.flatMap { schedule.queues[$0] ?? [] }
                + schedule.parked.values.flatMap { $0 }
            schedule.queues = [:]
            schedule.parked = [:]
            schedule.rotation = []
            schedule.count = 0
            return pending
        }
    }
}
