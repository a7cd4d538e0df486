import Synchronization

/// How long one read may run, and whether its caller has gone away.
///
/// A reader connection checks its budget from SQLite's progress handler and from the regular
/// expression function, so a statement stops within a few thousand VM steps of the deadline or
/// of its client disconnecting.
public final class ReadBudget: Sendable {
    /// When the read must stop.
    public let deadline: ContinuousClock.Instant
    private let cancelled = Atomic<Bool>(false)

    public init(deadline: ContinuousClock.Instant) {
        self.deadline = deadline
    }

    /// A budget of `timeout` from now.
    public convenience init(timeout: Duration) {
        self.init(deadline: .now + timeout)
    }

    /// Asks the read to stop at its next check.
    public func cancel() { cancelled.store(true, ordering: .relaxed) }

    /// Whether the caller went away.
    public var isCancelled: Bool { cancelled.load(ordering: .relaxed) }

    /// Whether the read must stop now: cancelled, or past its deadline.
    public var isExhausted: Bool { isCancelled || ContinuousClock.now >= deadline }
}

/// Limits on reads whose cost a client controls: lists, queries, counts, random picks.
public struct ReadLimits: Sendable {
    /// Threads, each with its own connection, that run such reads off the event loops.
    public var threads: Int
    /// Reads that may wait for a thread; beyond it a read fails at once with ``StoreError/busy``.
    public var queueLimit: Int
    /// How long one read (all its statements, in one transaction) may run.
    public var timeout: Duration

    public init(threads: Int = 2, queueLimit: Int = 256, timeout: Duration = .seconds(5)) {
        self.threads = max(1, threads)
        self.queueLimit = max(1, queueLimit)
        self.timeout = timeout
    }
}
