import Foundation
import RoostStore
import Synchronization

/// How the mail dispatcher paces itself.
public struct MailDispatchOptions: Sendable {
    /// Messages claimed per round.
    public var batch = 20
    /// Sends in flight at once.
    public var concurrency = 4
    /// The dispatch lease; renewed every round. With several instances on PostgreSQL one holds it.
    public var lease: Duration = .seconds(60)
    /// How often the dispatcher looks without an enqueue to wake it.
    public var pollInterval: Duration = .seconds(1)
    /// The first retry's delay, doubled each time up to the maximum.
    public var firstRetryDelay: Duration = .seconds(30)
    public var maximumRetryDelay: Duration = .seconds(3600)
    /// Sends of one message before it is given up.
    public var attempts = 10
    /// How long finished messages are kept (without their text).
    public var retention: Duration = .seconds(7 * 24 * 3600)
    /// Names this dispatcher in the lease.
    public var holder = "\(PushDispatchOptions.hostName()):\(getpid()):\(UUID().uuidString.prefix(8)):mail"

    public init() {}

    /// When a message whose `attempts` sends failed is tried again; nil once they are enough.
    public func nextAttempt(after attempts: Int, now: Int64) -> Int64? {
        guard attempts < self.attempts else { return nil }
        let backoff = min(
            PushDispatchOptions.milliseconds(firstRetryDelay) << min(Int64(max(attempts, 1) - 1), 40),
            PushDispatchOptions.milliseconds(maximumRetryDelay))
        return now + max(backoff, 0)
    }
}

/// Counts for `/metrics` and tests.
public final class MailMetrics: Sendable {
    let sent = Atomic<Int>(0)
    let retried = Atomic<Int>(0)
    let failed = Atomic<Int>(0)
    let queueDepth = Atomic<Int>(0)

    public init() {}

    public var sentCount: Int { sent.load(ordering: .relaxed) }
    public var retriedCount: Int { retried.load(ordering: .relaxed) }
    public var failedCount: Int { failed.load(ordering: .relaxed) }
    public var queueDepthCount: Int { queueDepth.load(ordering: .relaxed) }

    public func setQueueDepth(_ value: Int) { queueDepth.store(value, ordering: .relaxed) }

    /// Prometheus text lines.
    public func render() -> String {
        """
        # HELP roost_mail_sent_total Mail messages the SMTP server accepted.
        # TYPE roost_mail_sent_total counter
        roost_mail_sent_total \(sentCount)
        # HELP roost_mail_retried_total Sends that failed and were scheduled again.
        # TYPE roost_mail_retried_total counter
        roost_mail_retried_total \(retriedCount)
        # HELP roost_mail_failed_total Messages refused for good or given up.
        # TYPE roost_mail_failed_total counter
        roost_mail_failed_total \(failedCount)
        # HELP roost_mail_queue_depth Mail messages waiting or in flight.
        # TYPE roost_mail_queue_depth gauge
        roost_mail_queue_depth \(queueDepth.load(ordering: .relaxed))

        """
    }
}

/// Delivers the mail outbox through a ``MailSender``, as ``PushDispatcher`` delivers pushes: one
/// dispatcher among the instances holds the lease; each round marks due messages in flight (in
/// the database, before any send), sends them and records each answer: delivered, retried with
/// back-off, given up after ``MailDispatchOptions/attempts``, or refused. A message left in flight
/// by a dispatcher that died is sent again: none is lost; one whose answer was lost may arrive
/// twice. No request waits on the mail server.
public final class MailDispatcher: Sendable {
    let store: any MailStore
    let sender: any MailSender
    /// The envelope sender.
    let from: String
    public let options: MailDispatchOptions
    public let metrics = MailMetrics()
    let clock: any WallClock
    let logger: @Sendable (String) -> Void
    let instance = UUID().uuidString
    private let loop: DispatchLoop
    private let rounds = Atomic<Int>(0)
    private let lastPrune = Mutex<Int64>(0)

    public init(
        store: any MailStore, sender: any MailSender, from: String,
        options: MailDispatchOptions = MailDispatchOptions(), clock: any WallClock = SystemWallClock(),
        logger: @escaping @Sendable (String) -> Void = { _ in }
    ) {
        self.store = store
        self.sender = sender
        self.from = from
        self.options = options
        self.clock = clock
        self.logger = logger
        loop = DispatchLoop(pollInterval: options.pollInterval)
    }

    /// Rounds finished so far (tests wait for one after moving their clock).
    public var completedRounds: Int { rounds.load(ordering: .relaxed) }

    public func start() {
        loop.start({ [self] in try await dispatchRound() }) { [logger] error in
            logger("dispatching mail failed: \(error)")
        }
    }

    /// A message was queued: send it now rather than at the next poll.
    public func wake() { loop.wake() }

    /// Stops (sends in flight are cancelled; their messages stay in flight for the next
    /// dispatcher), gives the lease up and closes the sender. Call it before the storage closes.
    public func stop() async {
        await loop.stop()
        try? await store.releaseLease(holder: options.holder)
        await sender.shutdown()
    }

    /// One round; true when a full batch was sent.
    @discardableResult
    public func dispatchRound() async throws -> Bool {
        defer { rounds.add(1, ordering: .relaxed) }
        let now = clock.nowMilliseconds()
        guard try await store.hasWork(now: now, instance: instance) else { return false }
        guard try await store.claimLease(holder: options.holder, for: options.lease) else { return false }
        let due = try await store.claimDue(
            now: now, limit: options.batch, holder: options.holder, instance: instance)
        try await DispatchLoop.sendUnderLease(
            due, concurrency: options.concurrency, lease: options.lease, clock: clock,
            renew: { try await store.claimLease(holder: options.holder, for: options.lease) },
            send: { [self] delivery in try await deliver(delivery) })
        try await pruneHourly()
        metrics.queueDepth.store(try await store.queueDepth(), ordering: .relaxed)
        return due.count == options.batch
    }

    private func deliver(_ delivery: MailDelivery) async throws {
        let outcome: MailRecordedOutcome
        switch await sender.send(from: from, to: delivery.recipient, message: delivery.message) {
        case .delivered:
            outcome = .delivered
        case .rejected(let reason):
            // The reason is the server's answer; the message's text (a link) is never logged.
            logger("mail \(delivery.id) (\(delivery.kind)) was refused: \(reason)")
            outcome = .rejected(reason: reason)
        case .retry(let reason):
            let next = options.nextAttempt(after: delivery.attempts, now: clock.nowMilliseconds())
            if next == nil {
                logger(
                    "mail \(delivery.id) (\(delivery.kind)) given up after \(delivery.attempts) sends: \(reason)"
                )
            }
            outcome = .retry(nextAttempt: next, reason: reason)
        }
        try await store.record(outcome, id: delivery.id, instance: instance, now: clock.nowMilliseconds())
        // Counted once recorded: a scrape that sees it sent sees the outbox without it.
        switch outcome {
        case .delivered: metrics.sent.add(1, ordering: .relaxed)
        case .rejected, .retry(nil, _): metrics.failed.add(1, ordering: .relaxed)
        case .retry: metrics.retried.add(1, ordering: .relaxed)
        }
    }

    private func pruneHourly() async throws {
        let now = clock.nowMilliseconds()
        let due = lastPrune.withLock { last -> Bool in
            guard now - last >= 3_600_000 else { return false }
            last = now
            return true
        }
        if due { try await store.prune(before: now - PushDispatchOptions.milliseconds(options.retention)) }
    }
}
