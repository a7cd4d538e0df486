import Foundation
import RoostStore
import Synchronization

/// How the push dispatcher paces itself.
public struct PushDispatchOptions: Sendable {
    /// Deliveries claimed per round.
    public var batch = 100
    /// Sends in flight at once (the provider clients multiplex them on their connections).
    public var concurrency = 16
    /// The dispatch lease; renewed every round. With several instances on PostgreSQL one holds it.
    public var lease: Duration = .seconds(30)
    /// How often the dispatcher looks without an enqueue to wake it: another instance's
    /// enqueue, a lapsed lease, retries coming due.
    public var pollInterval: Duration = .seconds(1)
    /// The first retry's delay without a `Retry-After`, doubled each time up to the maximum.
    public var firstRetryDelay: Duration = .seconds(2)
    public var maximumRetryDelay: Duration = .seconds(3600)
    /// Sends of one delivery before it is given up.
    public var attempts = 6
    /// How long finished deliveries are kept for `GET /ff/push/{id}`.
    public var retention: Duration = .seconds(7 * 24 * 3600)
    /// Names this dispatcher in the lease: unique per process, or one name for a data folder
    /// only one server opens at a time.
    public var holder = "\(PushDispatchOptions.hostName()):\(getpid()):\(UUID().uuidString.prefix(8))"

    public init() {}

    /// When a delivery whose `attempts` sends failed is tried again; nil once they are enough.
    /// The provider's `Retry-After` wins over the back-off when it gives one.
    public func nextAttempt(after attempts: Int, retryAfter: Duration?, now: Int64) -> Int64? {
        guard attempts < self.attempts else { return nil }
        let backoff = min(
            Self.milliseconds(firstRetryDelay) << min(Int64(max(attempts, 1) - 1), 40),
            Self.milliseconds(maximumRetryDelay))
        let asked = retryAfter.map { min(Self.milliseconds($0), 24 * 3600 * 1000) }
        return now + max(asked ?? backoff, 0)
    }

    static func milliseconds(_ duration: Duration) -> Int64 {
        duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000
    }

    static func hostName() -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return "roost" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// Delivers the push outbox through a ``PushSender``: one dispatcher among the instances on a
/// database holds the lease; each round marks up to a batch of due deliveries in flight (in the
/// database, before any send), sends them `concurrency` at a time, and records each answer:
/// delivered, retried with back-off (the provider's `Retry-After` first), given up after
/// ``PushDispatchOptions/attempts``, refused, or an invalid token (its device row deleted, and
/// only then). Deliveries a dispatcher left in flight (killed mid-send) are sent again by the
/// next round of the next holder: none is lost, and one whose answer was lost may arrive twice.
public final class PushDispatcher: Sendable {
    let store: any PushStore
    let sender: any PushSender
    public let options: PushDispatchOptions
    public let metrics = PushMetrics()
    let clock: any WallClock
    let logger: @Sendable (String) -> Void
    /// This dispatcher's mark on the deliveries it has in flight: another's are orphans.
    let instance = UUID().uuidString
    private let loop: DispatchLoop
    private let rounds = Atomic<Int>(0)
    private let lastPrune = Mutex<Int64>(0)

    public init(
        store: any PushStore, sender: any PushSender, options: PushDispatchOptions = PushDispatchOptions(),
        clock: any WallClock = SystemWallClock(), logger: @escaping @Sendable (String) -> Void = { _ in }
    ) {
        self.store = store
        self.sender = sender
        self.options = options
        self.clock = clock
        self.logger = logger
        loop = DispatchLoop(pollInterval: options.pollInterval)
    }

    /// Rounds finished so far (tests wait for one after moving their clock).
    public var completedRounds: Int { rounds.load(ordering: .relaxed) }

    /// Starts delivering: after every ``wake()`` and every poll interval.
    public func start() {
        loop.start({ [self] in try await dispatchRound() }) { [logger] error in
            logger("dispatching push notifications failed: \(error)")
        }
    }

    /// A push was queued: deliver it now rather than at the next poll.
    public func wake() { loop.wake() }

    /// Stops (sends in flight are cancelled; their deliveries stay in flight for the next
    /// dispatcher), gives the lease up and closes the sender. Call it before the storage closes.
    public func stop() async {
        await loop.stop()
        try? await store.releaseLease(holder: options.holder)
        await sender.shutdown()
    }

    /// One round; true when a full batch was sent (there may be more at once).
    @discardableResult
    public func dispatchRound() async throws -> Bool {
        defer { rounds.add(1, ordering: .relaxed) }
        let now = clock.nowMilliseconds()
        // Read first: an idle instance, or one without the lease, writes nothing.
        guard try await store.hasWork(now: now, instance: instance) else { return false }
        guard try await store.claimLease(holder: options.holder, for: options.lease) else { return false }
        let due = try await store.claimDue(
            now: now, limit: options.batch, holder: options.holder, instance: instance)
        try await DispatchLoop.sendUnderLease(
            due, concurrency: options.concurrency, lease: options.lease, clock: clock,
            renew: { try await store.claimLease(holder: options.holder, for: options.lease) },
            send: { [self] delivery in try await deliver(delivery) })
        try await pruneHourly()
        metrics.setQueueDepth(try await store.queueDepth())
        return due.count == options.batch
    }

    private func deliver(_ delivery: PushDelivery) async throws {
        if delivery.uncertain { metrics.countUncertain() }
        let outcome: PushRecordedOutcome
        let now = clock.nowMilliseconds()
        if let notification = PushNotification(stored: delivery.notification),
            let platform = PushPlatform(rawValue: delivery.platform)
        {
            if let expiresAt = notification.expiresAt, expiresAt <= now {
                outcome = .retry(nextAttempt: nil, reason: "expired before it could be delivered")
            } else {
                let target = PushTarget(
                    platform: platform, token: delivery.token,
                    environment: delivery.environment.flatMap(APNsEnvironment.init(rawValue:)),
                    bundleID: delivery.bundleID)
                outcome = recorded(await sender.send(notification, to: target), delivery)
            }
        } else {
            outcome = .rejected(reason: "the stored notification or platform is not readable")
        }
        switch outcome {
        case .delivered: metrics.countSent()
        case .retry(let next, _):
            if next == nil { metrics.countFailed() } else { metrics.countRetried() }
        case .rejected: metrics.countFailed()
        case .invalidToken: break
        }
        let deleted = try await store.record(
            outcome, pushID: delivery.pushID, userGuid: delivery.userGuid, deviceId: delivery.deviceId,
            token: delivery.token, instance: instance, now: clock.nowMilliseconds())
        if deleted { metrics.countInvalidated() }
    }

    /// What the outbox records of a provider's answer.
    private func recorded(_ outcome: PushOutcome, _ delivery: PushDelivery) -> PushRecordedOutcome {
        switch outcome {
        case .delivered(let id): return .delivered(providerID: id)
        case .invalidToken(let reason): return .invalidToken(reason: reason)
        case .rejected(let reason):
            logger("push \(delivery.pushID) to a device of \(delivery.userGuid) was refused: \(reason)")
            return .rejected(reason: reason)
        case .retry(let after, let reason):
            let next = options.nextAttempt(
                after: delivery.attempts, retryAfter: after, now: clock.nowMilliseconds())
            if next == nil {
                logger(
                    "push \(delivery.pushID) to a device of \(delivery.userGuid) given up after \(delivery.attempts) sends: \(reason)"
                )
            }
            return .retry(nextAttempt: next, reason: reason)
        }
    }

    private func pruneHourly() async throws {
        let now = clock.nowMilliseconds()
        let due = lastPrune.withLock { last -> Bool in
            guard now - last >= 3_600_000 else { return false }
            last = now
            return true
        }
        if due {
            try await store.prune(finishedBefore: now - PushDispatchOptions.milliseconds(options.retention))
        }
    }
}
