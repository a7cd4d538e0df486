import Foundation
import RoostCore
import RoostStore
import Synchronization

/// How the ASYNC handler dispatcher paces itself.
public struct AsyncDispatchOptions: Sendable {
    /// Changes read from the log at a time, and the most bytes of documents they hold.
    public var batch = 100
    public var batchBytes = 4 << 20
    /// How long a claim of the dispatch lease lasts; renewed after every change. A handler's run
    /// must end well within it, or another instance may take over and run the same events: the
    /// server sets ``lease(for:)`` of its scripts' configuration.
    public var lease: Duration = .seconds(30)

    /// A lease twice the longest run (at least 30 s): a run may wait for a worker (the queue's
    /// bound), start one, then run for the timeout. With the default 5 s timeout, 80 s; a 30 s
    /// lease let runs of a script timeout above about 10 s be run twice by another instance.
    public static func lease(for scripts: ScriptRuntime.Configuration) -> Duration {
        let longestRun =
            (scripts.queueWait ?? scripts.timeout) + ScriptRuntime.Configuration.workerStartLimit
            + scripts.timeout
        return .milliseconds(Int64(max(30, 2 * longestRun) * 1000))
    }
    /// How often the dispatcher looks without a commit to wake it: the fallback for a lost
    /// notification, a lease held by an instance that died, and retries coming due.
    public var pollInterval: Duration = .seconds(1)
    /// The first retry's delay, doubled after each failure up to `maximumRetryDelay`.
    public var firstRetryDelay: Duration = .seconds(1)
    public var maximumRetryDelay: Duration = .seconds(600)
    /// Failed runs after which an event is given up (failed for good).
    public var attempts = 8
    /// Runs at once: independent events run side by side in the script pool; one object's
    /// events run one at a time, in log order. The server sets half its script workers.
    public var concurrency = 1
    /// Due retries one round runs at most, and how long after its start a round still starts
    /// one: a slowly failing handler costs a round at most this, not a batch of timeouts.
    public var retriesPerRound = 16
    public var retryRoundBudget: Duration = .seconds(10)
    /// Names this dispatcher in the lease: unique per process.
    public var holder = "\(Self.hostName()):\(getpid()):\(UUID().uuidString.prefix(8))"

    public init() {}

    /// When the retry after `attempts` failed runs is due; nil once they are enough to give up.
    public func nextAttempt(after attempts: Int, now: Int64) -> Int64? {
        guard attempts < self.attempts else { return nil }
        let first = milliseconds(firstRetryDelay)
        let delay = min(first << min(Int64(attempts - 1), 40), milliseconds(maximumRetryDelay))
        return now + delay
    }

    /// The machine's name, without a DNS lookup.
    private static func hostName() -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return "roost" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    private func milliseconds(_ duration: Duration) -> Int64 {
        duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000
    }
}

/// Runs the definition's ASYNC script handlers after the client's answer, from the change log:
/// one dispatcher among the instances on a database holds the outbox's lease, reads the changes
/// after the outbox's cursor, runs each matching handler (`run`), records failures to retry
/// with backoff, and moves the cursor past each change once it and every change before it are
/// handled. A crash re-runs at most the changes in progress (at least once; scripts get the
/// event id for idempotency). Runs take turns by who made the change (``AsyncRunTurns``), and
/// up to ``AsyncDispatchOptions/concurrency`` run at once, one object's in log order; a retry
/// runs after the object's later events, as it always did.
///
/// Events: a change's operation, `create`, `update` or `delete`. Token revocations and updates
/// that change only the access list (the document is the same before and after) run no handler.
public final class AsyncHandlerDispatcher: Sendable {
    public typealias Run = @Sendable (ScriptHandler, Change) async throws -> Void

    let outbox: any ScriptOutboxStore
    let log: any ChangeLog
    let handlers: @Sendable () -> [ScriptHandler]
    let run: Run
    public let options: AsyncDispatchOptions
    public let metrics = AsyncHandlerMetrics()
    let clock: @Sendable () -> Int64
    let logger: @Sendable (String) -> Void

    private let loop: DispatchLoop
    /// The subscriptions this dispatcher last wrote to the outbox, while it kept the lease since.
    private let recorded = Mutex<Set<OutboxSubscription>?>(nil)
    /// When the cursor last followed the log's end with no ASYNC handler defined.
    private let lastIdleAdvance = Mutex<ContinuousClock.Instant?>(nil)
    /// A commit happened since the cursor last followed the log's end while idle; the poll alone
    /// (no commit) costs an idle server no database work.
    private let committedSinceIdleAdvance = Mutex(true)

    /// `handlers` gives the definition in force's handlers (ASYNC ones are taken); `run` runs one
    /// on one change and throws when it failed. `clock` is wall-clock milliseconds.
    public init(
        outbox: any ScriptOutboxStore, log: any ChangeLog,
        options: AsyncDispatchOptions = AsyncDispatchOptions(),
        handlers: @escaping @Sendable () -> [ScriptHandler],
        clock: @escaping @Sendable () -> Int64 = { Int64(Date().timeIntervalSince1970 * 1000) },
        logger: @escaping @Sendable (String) -> Void = { _ in },
        run: @escaping Run
    ) {
        self.outbox = outbox
        self.log = log
        self.options = options
        self.handlers = handlers
        self.clock = clock
        self.logger = logger
        self.run = run
        loop = DispatchLoop(pollInterval: options.pollInterval)
    }

    /// The event id a script gets for `change`: `Collection:sequence`.
    public static func eventID(of change: Change) -> String {
        ScriptOutbox.eventID(collection: change.collection, sequence: change.sequence)
    }

    /// Starts dispatching: after every commit, and every `pollInterval` as the fallback.
    public func start() {
        log.observeCommits { [weak self] in
            self?.committedSinceIdleAdvance.withLock { $0 = true }
            self?.loop.wake()
        }
        loop.start({ [self] in try await dispatchRound() }) { [logger] error in
            logger("dispatching async script handlers failed: \(error)")
        }
    }

    /// Stops (a run in progress is cancelled, and its change stays undispatched, for the next
    /// dispatcher to run again) and gives up the lease, so another instance takes over at once.
    /// Call it before the storage closes.
    public func stop() async {
        await loop.stop()
        try? await outbox.releaseLease(holder: options.holder)
    }

    /// One round: claims (or renews) the lease, runs the retries that are due, then up to one
    /// batch of new changes. True when there may be more to do at once.
    @discardableResult
    public func dispatchRound() async throws -> Bool {
        let holder = options.holder
        let asynchronous = handlers().filter { $0.phase == .async }
        let subscriptions = Self.subscriptions(of: asynchronous)
        let stale = recorded.withLock { $0 != subscriptions }
        if asynchronous.isEmpty && !stale {
            // Every commit wakes the dispatcher: with nothing to run, the cursor follows the
            // log's end once a poll interval, so writes pay nothing for it.
            let now = ContinuousClock.now
            let interval = options.pollInterval
            let idle = lastIdleAdvance.withLock { last -> Bool in
                if let last, now - last < interval { return true }
                last = now
                return false
            }
            if idle { return false }
            let committed = committedSinceIdleAdvance.withLock { committed in
                defer { committed = false }
                return committed
            }
            if !committed { return false }
        }
        // Read first, so an instance with nothing to do (or without the lease) writes nothing:
        // its own writes' commits wake it again.
        let seen = try await outbox.dispatchedThrough()
        let last = try await log.window().last
        let due = try await outbox.dueRetries(now: clock(), limit: 1)
        guard last > seen || !due.isEmpty || stale else { return false }
        guard try await outbox.claimLease(holder: holder, for: options.lease) else {
            // Another instance dispatches, and may record other subscriptions meanwhile.
            recorded.withLock { $0 = nil }
            return false
        }
        if stale {
            try await outbox.setSubscriptions(subscriptions)
            recorded.withLock { $0 = subscriptions }
        }
        guard !asynchronous.isEmpty else {
            // Nothing to run: events committed while no ASYNC handler is defined are not kept,
            // and failed runs wait for their handler to be defined again.
            if last > seen {
                _ = try await outbox.complete(
                    through: last, failures: [], holder: holder, lease: options.lease)
            }
            return false
        }
        // Read again under the lease: the previous holder may have moved it meanwhile.
        let dueNow = try await outbox.dueRetries(now: clock(), limit: options.retriesPerRound)
        let cursor = try await outbox.dispatchedThrough()
        let changes = try await log.changes(after: cursor, limit: options.batch, maxBytes: options.batchBytes)
        var runs: [AsyncRun] = []
        for failed in dueNow {
            if let handler = asynchronous.first(where: { $0.name == failed.handler }) {
                runs.append(AsyncRun(handler: handler, change: failed.change, retry: failed))
            } else {
                // The definition in force no longer has the handler: nothing can run it.
                let failure = RunFailure(
                    sequence: failed.change.sequence, handler: failed.handler, attempts: failed.attempts,
                    error: "the handler '\(failed.handler)' is no longer defined", nextAttempt: nil)
                guard
                    try await outbox.retried(
                        sequence: failed.change.sequence, handler: failed.handler, failure: failure,
                        holder: holder)
                else { return false }
            }
        }
        // Each new run's change (by index), and how many runs each change has left.
        var changeOf: [Int: Int] = [:]
        var left = [Int](repeating: 0, count: changes.count)
        for (position, change) in changes.enumerated() {
            for handler in asynchronous where Self.runs(handler, on: change) {
                changeOf[runs.count] = position
                runs.append(AsyncRun(handler: handler, change: change))
                left[position] += 1
            }
        }
        // The cursor passes each change once it and every change before it are handled, with
        // their failures recorded, in one transaction.
        var completed = 0
        var failures: [RunFailure] = []
        let finishedAll = try await perform(runs) { index, error in
            let run = runs[index]
            guard let position = changeOf[index] else {
                return try await recordRetry(run, error: error)
            }
            if let error {
                let next = options.nextAttempt(after: 1, now: clock())
                failures.append(
                    RunFailure(
                        sequence: run.change.sequence, handler: run.handler.name, attempts: 1, error: error,
                        nextAttempt: next))
                if next == nil { metrics.gaveUp(run.handler.name) }
            }
            left[position] -= 1
            var frontier = completed
            while frontier < changes.count, left[frontier] == 0 { frontier += 1 }
            guard frontier > completed else { return true }
            defer { completed = frontier }
            let recorded = failures.filter { $0.sequence <= changes[frontier - 1].sequence }
            failures.removeAll { $0.sequence <= changes[frontier - 1].sequence }
            return try await outbox.complete(
                through: changes[frontier - 1].sequence, failures: recorded, holder: holder,
                lease: options.lease)
        }
        // Stopped mid-run: the changes in progress stay undispatched, for the next dispatcher.
        guard finishedAll, !Task.isCancelled else { return false }
        if let last = changes.last?.sequence, last > cursor {
            guard
                try await outbox.complete(
                    through: last, failures: failures, holder: holder, lease: options.lease)
            else { return false }
        }
        return changes.count == options.batch || dueNow.count == options.retriesPerRound
    }

    /// Runs `runs` in owners' turns (``AsyncRunTurns``), `concurrency` at a time; `finished` records
    /// each run's outcome (its failure's text, or nil) and answers false when the lease is lost.
    /// Retries start only within the round's retry budget; the rest stay due. False when stopped.
    private func perform(_ runs: [AsyncRun], finished: (Int, String?) async throws -> Bool) async throws
        -> Bool
    {
        var turns = AsyncRunTurns(runs)
        let retriesUntil = ContinuousClock.now + options.retryRoundBudget
        var renewed = ContinuousClock.now
        return try await withThrowingTaskGroup(of: (Int, String?, Bool).self) { group in
            var active = 0
            var stopped = false
            while true {
                while !stopped, active < max(1, options.concurrency), let index = turns.next() {
                    let run = runs[index]
                    if run.retry != nil, ContinuousClock.now > retriesUntil {
                        turns.finished(index)
                        continue
                    }
                    active += 1
                    group.addTask { [self] in
                        let error = await attempt(run.handler, run.change)
                        return (index, error, Task.isCancelled)
                    }
                }
                guard let (index, error, cancelled) = try await group.next() else { break }
                active -= 1
                turns.finished(index)
                if stopped { continue }
                if cancelled || Task.isCancelled {
                    stopped = true
                } else if try await !finished(index, error) {
                    stopped = true
                } else if ContinuousClock.now - renewed > options.lease / 3 {
                    renewed = ContinuousClock.now
                    stopped = try await !outbox.claimLease(holder: options.holder, for: options.lease)
                }
                if stopped { group.cancelAll() }
            }
            return !stopped
        }
    }

    /// Records a retry's outcome: forgotten when it succeeded, else its next attempt or given up.
    private func recordRetry(_ run: AsyncRun, error: String?) async throws -> Bool {
        guard let failed = run.retry else { return true }
        var failure: RunFailure?
        if let error {
            let attempts = failed.attempts + 1
            let next = options.nextAttempt(after: attempts, now: clock())
            failure = RunFailure(
                sequence: failed.change.sequence, handler: failed.handler, attempts: attempts, error: error,
                nextAttempt: next)
            if next == nil { metrics.gaveUp(run.handler.name) }
        }
        return try await outbox.retried(
            sequence: failed.change.sequence, handler: failed.handler, failure: failure,
            holder: options.holder)
    }

    /// Whether `handler` runs for `change`.
    static func runs(_ handler: ScriptHandler, on change: Change) -> Bool {
        guard handler.collection == change.collection,
            let event = ScriptHandler.Event(rawValue: change.operation.rawValue),
            handler.events.contains(event)
        else { return false }
        return change.operation != .update || change.document != change.previousDocument
    }

    /// Runs `handler` on `change`, counting it; the failure's text when it threw.
    private func attempt(_ handler: ScriptHandler, _ change: Change) async -> String? {
        metrics.ran(handler.name)
        do {
            try await run(handler, change)
            return nil
        } catch {
            metrics.failed(handler.name)
            logger("async handler '\(handler.name)' failed on \(Self.eventID(of: change)): \(error)")
            return String(describing: error)
        }
    }

    private static func subscriptions(of asynchronous: [ScriptHandler]) -> Set<OutboxSubscription> {
        var subscriptions = Set<OutboxSubscription>()
        for handler in asynchronous {
            for event in handler.events {
                guard let operation = Change.Operation(rawValue: event.rawValue) else { continue }
                subscriptions.insert(
                    OutboxSubscription(
                        handler: handler.name, collection: handler.collection, operation: operation))
            }
        }
        return subscriptions
    }
}
