/// One ASYNC handler the dispatcher runs, as the store needs to know it: while any is recorded,
/// the change log is not trimmed past the dispatch cursor, and events trimmed anyway (past the
/// hard cap) that this handler would have run are recorded as failed for good.
public struct OutboxSubscription: Sendable, Hashable {
    public var handler: String
    public var collection: String
    /// `create`, `update` or `delete`.
    public var operation: Change.Operation

    public init(handler: String, collection: String, operation: Change.Operation) {
        self.handler = handler
        self.collection = collection
        self.operation = operation
    }
}

/// A handler's run on one event that failed: what the dispatcher records.
public struct RunFailure: Sendable, Equatable {
    /// The change-log sequence number of the event.
    public var sequence: Int64
    public var handler: String
    /// Runs that failed so far.
    public var attempts: Int
    /// The last failure's text, at most ``ScriptOutbox/maximumErrorBytes``.
    public var error: String
    /// When the next attempt is due (wall-clock milliseconds); nil once the run is given up.
    public var nextAttempt: Int64?

    public init(sequence: Int64, handler: String, attempts: Int, error: String, nextAttempt: Int64?) {
        self.sequence = sequence
        self.handler = handler
        self.attempts = attempts
        self.error = ScriptOutbox.truncated(error)
        self.nextAttempt = nextAttempt
    }
}

/// A failed run as the store keeps it: with its own copy of the event, so a retry still works
/// after the change log has trimmed the event away.
public struct FailedRun: Sendable, Equatable {
    public enum State: String, Sendable {
        /// Retried when `nextAttempt` comes.
        case pendingRetry = "pending"
        /// Given up: only `roost events retry` runs it again.
        case failedForGood = "failed"
    }

    /// The event; its documents are nil for an event trimmed before it was dispatched.
    public var change: Change
    public var handler: String
    public var attempts: Int
    public var error: String
    public var nextAttempt: Int64?
    /// The change log dropped the event before it was dispatched (the hard cap on an
    /// undispatched log): there is nothing to run again.
    public var trimmed: Bool

    public var state: State { nextAttempt == nil ? .failedForGood : .pendingRetry }

    /// `Collection:sequence`, the id scripts get as `context.eventId`.
    public var eventID: String {
        ScriptOutbox.eventID(collection: change.collection, sequence: change.sequence)
    }

    public init(
        change: Change, handler: String, attempts: Int, error: String, nextAttempt: Int64?, trimmed: Bool
    ) {
        self.change = change
        self.handler = handler
        self.attempts = attempts
        self.error = error
        self.nextAttempt = nextAttempt
        self.trimmed = trimmed
    }
}

/// The durable outbox of ASYNC script handlers, on the database the change log is in: the
/// dispatch cursor, the lease that lets one instance dispatch, and the failed runs.
public protocol ScriptOutboxStore: Sendable {
    /// The last change-log sequence number fully dispatched.
    func dispatchedThrough() async throws -> Int64

    /// Takes or renews the lease for `holder` when it is free, expired or already `holder`'s
    /// (one atomic UPDATE, timed by the database's clock); true when `holder` holds it now.
    func claimLease(holder: String, for duration: Duration) async throws -> Bool

    /// Gives the lease up, if `holder` holds it, so another instance need not wait it out.
    func releaseLease(holder: String) async throws

    /// Records the ASYNC handlers in force (replacing those recorded); none unpins the log.
    func setSubscriptions(_ subscriptions: Set<OutboxSubscription>) async throws

    /// The ASYNC handlers recorded.
    func subscriptions() async throws -> Set<OutboxSubscription>

    /// In one transaction, if `holder` holds the lease: records `failures` (runs of events still
    /// in the change log), moves the cursor up to `sequence` (never back) and renews the lease
    /// for `lease`. False, with nothing written, when `holder` lost the lease. Of the runs given
    /// up, about the newest `keepingGivenUp` are kept (see ``ScriptOutbox/givenUpRunsKept``).
    func complete(
        through sequence: Int64, failures: [RunFailure], holder: String, lease: Duration, keepingGivenUp: Int
    ) async throws -> Bool

    /// After a retry: records its failure (attempts, error, next attempt or given up), or forgets
    /// the run when `failure` is nil (it succeeded). False when `holder` lost the lease. Of the
    /// runs given up, about the newest `keepingGivenUp` are kept.
    func retried(
        sequence: Int64, handler: String, failure: RunFailure?, holder: String, keepingGivenUp: Int
    ) async throws -> Bool

    /// Failed runs, by event then handler, at most `limit`.
    func failedRuns(limit: Int) async throws -> [FailedRun]

    /// Runs pending retry whose time has come at `now`, the earliest first, at most `limit`.
    func dueRetries(now: Int64, limit: Int) async throws -> [FailedRun]

    /// Makes failed runs due at `now` with their attempts reset: those of the given events
    /// (`Collection:sequence`), or every one when `events` is nil. Trimmed events stay failed.
    /// Returns how many runs were re-queued.
    func requeue(events: [String]?, now: Int64) async throws -> Int
}

/// Shared definitions of the outbox.
public enum ScriptOutbox {
    /// The most bytes of a failure's text kept.
    public static let maximumErrorBytes = 2048

    /// Runs given up (failed for good) that the store keeps, newest first: a handler that always
    /// fails would otherwise keep a copy of every event it saw. Runs pending a retry are never
    /// dropped; they are bounded by the retry schedule.
    public static let givenUpRunsKept = 10_000

    /// The text recorded for events the hard cap trimmed before they were dispatched.
    public static let trimmedError = "trimmed"

    public static func eventID(collection: String, sequence: Int64) -> String { "\(collection):\(sequence)" }

    /// The collection and sequence of an event id; nil when it is not `Collection:sequence`.
    public static func parseEventID(_ id: String) -> (collection: String, sequence: Int64)? {
        guard let colon = id.lastIndex(of: ":"), let sequence = Int64(id[id.index(after: colon)...]),
            sequence > 0
        else { return nil }
        return (String(id[..<colon]), sequence)
    }

    /// `text` cut to ``maximumErrorBytes`` of UTF-8 on a character boundary.
    public static func truncated(_ text: String) -> String {
        guard text.utf8.count > maximumErrorBytes else { return text }
        var result = ""
        var bytes = 0
        for character in text {
            let size = character.utf8.count
            if bytes + size > maximumErrorBytes - 3 { break }
            result.append(character)
            bytes += size
        }
        return result + "…"
    }
}

extension ScriptOutboxStore {
    /// ``complete(through:failures:holder:lease:keepingGivenUp:)`` keeping ``ScriptOutbox/givenUpRunsKept``.
    public func complete(through sequence: Int64, failures: [RunFailure], holder: String, lease: Duration)
        async throws -> Bool
    {
        try await complete(
            through: sequence, failures: failures, holder: holder, lease: lease,
            keepingGivenUp: ScriptOutbox.givenUpRunsKept)
    }

    /// ``retried(sequence:handler:failure:holder:keepingGivenUp:)`` keeping ``ScriptOutbox/givenUpRunsKept``.
    public func retried(sequence: Int64, handler: String, failure: RunFailure?, holder: String) async throws
        -> Bool
    {
        try await retried(
            sequence: sequence, handler: handler, failure: failure, holder: holder,
            keepingGivenUp: ScriptOutbox.givenUpRunsKept)
    }
}
