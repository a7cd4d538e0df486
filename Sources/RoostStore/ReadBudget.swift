import Synchronization

/// How long one read may run, and whether its caller has gone away.
///
/// A reader connection checks its budget from SQLite's progress handler and from the regular
/// expression function, so a statement stops within a few thousand VM steps of the deadline or
/// of its client disconnecting.
public final class ReadBudget: Sendable {
    /// When the read must stop.
    public let deadline: ContinuousClock.Instant
    /// After this, the read is slow: its thread yields the CPU to the event loops.
    let slowAfter: ContinuousClock.Instant
    private let cancelled = Atomic<Bool>(false)
    /// Set once the reader thread lowered its priority for this read; only its thread touches it.
    private let slow = Atomic<Bool>(false)
    /// Checks left before the read must stop, whatever the clock says: a budget of work, not of
    /// time, so a busy machine that preempts the thread does not make a quick read look slow.
    private let checksLeft: Atomic<Int>

    public init(
        deadline: ContinuousClock.Instant, slowAfter: ContinuousClock.Instant? = nil, checks: Int = .max
    ) {
        self.deadline = deadline
        self.slowAfter = slowAfter ?? deadline
        checksLeft = Atomic(checks)
    }

    /// A budget of `timeout` from now, slow after `slowAfter`, and at most `checks` checks.
    public convenience init(timeout: Duration, slowAfter: Duration? = nil, checks: Int = .max) {
        let now = ContinuousClock.now
        self.init(deadline: now + timeout, slowAfter: slowAfter.map { now + $0 }, checks: checks)
    }

    /// Whether the read has been marked slow.
    public var isSlow: Bool { slow.load(ordering: .relaxed) }

    /// Checks the budget from the reader's thread: true when the read must stop; the first check
    /// after ``slowAfter`` runs `becameSlow` once.
    public func check(becameSlow: () -> Void) -> Bool {
        if isCancelled { return true }
        if checksLeft.subtract(1, ordering: .relaxed).newValue < 0 { return true }
        let now = ContinuousClock.now
        if now >= deadline { return true }
        if now >= slowAfter, !slow.load(ordering: .relaxed) {
            slow.store(true, ordering: .relaxed)
            becameSlow()
        }
        return false
    }

    /// Asks the read to stop at its next check.
    public func cancel() { cancelled.store(true, ordering: .relaxed) }

    /// Whether the caller went away.
    public var isCancelled: Bool { cancelled.load(ordering: .relaxed) }

    /// Whether the read must stop now: cancelled, or past its deadline.
    public var isExhausted: Bool {
        isCancelled || checksLeft.load(ordering: .relaxed) < 0 || ContinuousClock.now >= deadline
    }
}

/// Limits on reads whose cost a client controls: lists, queries, counts, random picks.
public struct ReadLimits: Sendable {
    /// Threads, each with its own connection, that run such reads off the event loops.
    public var threads: Int
    /// Reads that may wait for a thread; beyond it a read fails at once with ``StoreError/busy``.
    public var queueLimit: Int
    /// How long one read (all its statements, in one transaction) may run.
    public var timeout: Duration
    /// A read running longer than this lowers its thread's priority (nice ``slowReadNice``) until
    /// it ends, so that costly queries yield the CPU to the event loops and to quick reads.
    public var slowAfter: Duration
    /// The nice value of a thread running a slow read.
    public static let slowReadNice: Int32 = 10
    /// SQLite VM steps a read may first run on the calling thread (an event loop), about half a
    /// millisecond by default, before it is stopped there and handed to a reader thread; zero sends
    /// every read to the reader threads. Counted in steps, not time, so that a preempted thread
    /// does not make a quick read look slow.
    public var inlineSteps: Int

    public init(
        threads: Int = 2, queueLimit: Int = 256, timeout: Duration = .seconds(5),
        slowAfter: Duration = .milliseconds(50), inlineSteps: Int = 64_000
    ) {
        self.inlineSteps = inlineSteps
        self.threads = max(1, threads)
        self.queueLimit = max(1, queueLimit)
        self.timeout = timeout
        self.slowAfter = slowAfter
    }
}
