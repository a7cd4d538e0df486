import Foundation
import RoostJSON
import RoostStore
import RoostThreads
import Synchronization

/// The bounds on realtime streams.
public struct EventLimits: Sendable {
    /// Open streams per user (per client address for anonymous callers): 429 `too_many_streams`.
    public var streamsPerUser = 8
    /// Open streams per client address (an IPv6 /64 as one), whoever is logged in: accounts are
    /// cheap, so one address registering many must not take every stream. 429 `too_many_streams`.
    public var streamsPerClient = 64
    /// Open streams in all: 503 `server_busy`.
    public var streams = 1000
    /// Subscriptions one stream may carry: 400 `too_many_subscriptions`.
    public var subscriptionsPerStream = 16
    /// Bytes a stream may have waiting for a client that does not read; beyond it the client is
    /// sent a farewell naming its last delivered id and disconnected.
    public var bufferedBytes = 1 << 20
    /// The bytes of events all streams may hold together (an event sent to many streams counts
    /// once, and viewers with the same bytes share them). A new copy past it is refused (its
    /// streams resume later); past half of it, streams that stay behind are cut, and resume.
    public var heldBytes = 64 << 20
    /// How long a stream behind may read nothing while the streams hold over half of
    /// ``heldBytes`` before it is cut (at most ``slowReaderTimeout``).
    public var stalledStreamGrace: Duration = .seconds(5)
    /// How long a stream may stay backed up (its client not reading) before it is sent the
    /// farewell and disconnected.
    public var slowReaderTimeout: Duration = .seconds(30)
    /// How often a quiet stream gets a comment (and its position), and tokens are checked for expiry.
    public var heartbeat: Duration = .seconds(15)
    /// What the change log keeps, and how often and in what batches it is trimmed.
    public var retention = ChangeRetention()
    public var trimInterval: Duration = .seconds(60)
    public var trimBatch = 1000
    /// Log entries read per round of the fan-out, and the most bytes of documents they hold.
    public var readBatch = 256
    public var readBatchBytes = 4 << 20

    public init() {}
}

/// The realtime change feed: streams subscribe to collections, objects or queries; one fan-out
/// task reads the change log after each commit and gives every stream the events its caller may
/// see, authorised in memory against the object at hand (no query per subscriber per event).
/// A stream starts at the log's end, or after a position it resumes from.
public final class ChangeFeed: Sendable {
    struct State: Sendable {
        var streams: [Int: Stream] = [:]
        var perOwner: [String: Int] = [:]
        var perClient: [String: Int] = [:]
        var nextID = 0
        var closed = false
        /// The highest position this feed's trimming removed: a stream behind it missed entries.
        var trimmedThrough: Int64 = 0
    }

    let log: any ChangeLog
    let definitions: AppDefinitionSource
    public let limits: EventLimits
    /// Whether the token with this id still exists and has not expired.
    let tokenIsLive: @Sendable (String) async -> Bool
    /// The caller with its current groups and flags; nil when the user is gone or deactivated.
    let refreshCaller: @Sendable (Principal) async -> Principal?
    let logger: @Sendable (String) -> Void
    let state = Mutex(State())
    /// What the streams hold of the events sent them (``EventLimits/heldBytes``).
    let heldBytes = HeldEventBytes()
    /// Open streams, readable without the lock: the writer's commit hook wakes nobody without one.
    private let openStreams = Atomic<Int>(0)
    /// Set by the heartbeat task; the fan-out sends the heartbeats between its rounds, so a
    /// heartbeat's id is never older than an event already sent (the client would resume from it).
    let heartbeatDue = Atomic<Bool>(false)
    private let wakes: AsyncStream<Void>
    let wake: AsyncStream<Void>.Continuation
    private let tasks = Mutex<[Task<Void, Never>]>([])

    public init(
        log: any ChangeLog, definitions: AppDefinitionSource, limits: EventLimits = EventLimits(),
        tokenIsLive: @escaping @Sendable (String) async -> Bool,
        refreshCaller: @escaping @Sendable (Principal) async -> Principal? = { $0 },
        logger: @escaping @Sendable (String) -> Void = { _ in }
    ) {
        self.log = log
        self.refreshCaller = refreshCaller
        self.definitions = definitions
        self.limits = limits
        self.tokenIsLive = tokenIsLive
        self.logger = logger
        (wakes, wake) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    /// Starts the fan-out, the heartbeat and the trimming of the log; ``shutdown()`` joins them.
    public func start() {
        // Weak: the database may outlive the feed, which is then simply not woken.
        log.observeCommits { [weak self] in self?.committed() }
        // Never on an event loop, whoever starts the feed: these read the database.
        let started = [
            Task(executorPreference: globalConcurrentExecutor) { [self] in await fanOut() },
            Task(executorPreference: globalConcurrentExecutor) { [self] in await heartbeats() },
            Task(executorPreference: globalConcurrentExecutor, priority: .background) { [self] in
                await trimming()
            },
        ]
        tasks.withLock { $0 = started }
    }

    /// A commit may have appended entries: wakes the fan-out, when a stream listens.
    private func committed() {
        if DeliveryTrace.isEnabled { DeliveryTrace.lastCommit.store(DeliveryTrace.now(), ordering: .relaxed) }
        if openStreams.load(ordering: .relaxed) > 0 { wake.yield() }
    }

    /// Ends every stream with a comment saying why, and stops the feed's tasks.
    public func shutdown() async {
        let streams = state.withLock { state in
            state.closed = true
            return Array(state.streams.values)
        }
        for stream in streams { stream.sink.finish(Array(": the server is shutting down\n\n".utf8)) }
        DeliveryTrace.dump()
        wake.finish()
        let running = tasks.withLock { tasks in
            defer { tasks = [] }
            return tasks
        }
        for task in running { task.cancel() }
        for task in running { await task.value }
    }

    /// Opens a stream: checks the subscriptions and limits, then sends the stream its opening
    /// (and a `reset` event when `resumeAfter` is outside the log's window); events follow.
    public func open(
        _ subscriptions: [EventSubscription], caller: Principal?, client: String, resumeAfter: Int64?,
        sink: any EventSink
    ) async throws {
        guard !subscriptions.isEmpty else {
            throw RoostError.invalidParameter(
                "subscribe", "Name at least one subscription, such as ?subscribe=Post or ?collection=Post.")
        }
        guard subscriptions.count <= limits.subscriptionsPerStream else {
            throw RoostError.tooManySubscriptions(limits.subscriptionsPerStream)
        }
        let access = Access(caller: caller, definition: definitions.definition)
        let bound = try subscriptions.map { try BoundSubscription($0, access: access) }
        let window = try await log.window()
        var position = window.last
        var reset: [UInt8] = []
        if let resumeAfter {
            if window.canResume(after: resumeAfter) {
                position = resumeAfter
            } else {
                reset = EventFormat.reset(last: window.last, window: window)
            }
        }
        // The id tells a client where it starts, so a cut before its first event loses nothing.
        let opening = Array("retry: 3000\nid: \(position)\n: subscribed\n\n".utf8) + reset
        guard sink.send(opening, farewell: []) else { return }
        let owner = caller.map { "user " + $0.userGuid } ?? "address " + client
        let id = try state.withLock { state throws(RoostError) -> Int in
            guard !state.closed else {
                throw RoostError.serverBusy(
                    retryAfter: 5, message: "The server is shutting down; reconnect shortly.")
            }
            guard state.streams.count < limits.streams else {
                throw RoostError.serverBusy(
                    retryAfter: 5,
                    message: "The server holds its most event streams (\(limits.streams)); reconnect shortly."
                )
            }
            guard state.perOwner[owner, default: 0] < limits.streamsPerUser else {
                throw RoostError.tooManyStreams(limits.streamsPerUser)
            }
            guard state.perClient[client, default: 0] < limits.streamsPerClient else {
                throw RoostError.tooManyStreamsFromClient(limits.streamsPerClient)
            }
            state.nextID += 1
            state.perOwner[owner, default: 0] += 1
            state.perClient[client, default: 0] += 1
            openStreams.add(1, ordering: .relaxed)
            state.streams[state.nextID] = Stream(
                id: state.nextID, owner: owner, client: client, caller: caller, subscriptions: bound,
                sink: sink, position: position)
            return state.nextID
        }
        sink.onEnd { [self] in remove(id) }
        wake.yield()
    }

    /// Open streams now.
    public var streamCount: Int { openStreams.load(ordering: .relaxed) }

    func remove(_ id: Int) {
        state.withLock { state in
            guard let stream = state.streams.removeValue(forKey: id) else { return }
            openStreams.subtract(1, ordering: .relaxed)
            state.perOwner[stream.owner, default: 1] -= 1
            if state.perOwner[stream.owner] == 0 { state.perOwner[stream.owner] = nil }
            state.perClient[stream.fixed.client, default: 1] -= 1
            if state.perClient[stream.fixed.client] == 0 { state.perClient[stream.fixed.client] = nil }
        }
    }

    /// Reads the log after the least advanced stream, a batch at a time, until every stream has
    /// seen all of it; then waits for the next commit or stream. A stream whose client is behind
    /// on reading is skipped (the others go on) and polled until it catches up or times out.
    private func fanOut() async {
        for await _ in wakes {
            var tracedAt: UInt64 = 0
            if DeliveryTrace.isEnabled {
                let commit = DeliveryTrace.lastCommit.load(ordering: .relaxed)
                if DeliveryTrace.lastWokenCommit.exchange(commit, ordering: .relaxed) != commit {
                    DeliveryTrace.record(.commitToWoken, since: commit)
                }
                tracedAt = DeliveryTrace.now()
            }
            while !Task.isCancelled {
                if heartbeatDue.exchange(false, ordering: .relaxed) { sendHeartbeats() }
                let (streams, trimmedThrough) = state.withLock {
                    (Array($0.streams.values), $0.trimmedThrough)
                }
                // Indexes into `streams`: a thousand streams are not copied again.
                var ready: [Int] = []
                var backedUp: [Stream] = []
                ready.reserveCapacity(streams.count)
                for index in streams.indices {
                    if streams[index].sink.isBackedUp {
                        backedUp.append(streams[index])
                    } else {
                        ready.append(index)
                    }
                }
                let lagging = await waitForSlowReaders(backedUp)
                if let from = ready.lazy.map({ streams[$0].position }).min(),
                    var batch = await read(after: from)
                {
                    if tracedAt != 0 {
                        DeliveryTrace.record(.wokenToRead, since: tracedAt)
                        tracedAt = DeliveryTrace.now()
                    }
                    // A change to a user or a group ends the round, so what follows is judged
                    // with the callers' current groups.
                    let membership = Self.firstMembershipChange(in: batch)
                    let full = isFull(batch)
                    if let membership { batch = Array(batch[...membership]) }
                    let outcomes = deliver(
                        batch, to: ready, of: streams, trimmedThrough: trimmedThrough, readAt: tracedAt)
                    tracedAt = 0
                    record(outcomes)
                    // Over the budget, the streams behind are cut once they stay behind: look
                    // again even when the log has nothing more.
                    let overBudget = holdsTooMuch
                    if let index = membership {
                        let change = batch[index]
                        await refreshCallers(
                            of: change.collection == Self.groupCollection ? nil : change.guid)
                    }
                    // A batch short of the limits was the log's end: the next commit or stream
                    // wakes the feed, and reading again now would only find nothing.
                    if full || membership != nil || lagging || overBudget
                        || outcomes.contains(where: \.backedUp)
                    {
                        continue
                    }
                    break
                }
                guard lagging else { break }
                try? await Task.sleep(for: .milliseconds(20))
            }
        }
    }

    /// Whether a read may have stopped at one of its limits, short of the log's end.
    private func isFull(_ batch: [Change]) -> Bool {
        batch.count >= limits.readBatch
            || batch.reduce(0) { $0 + ChangeReader.cost(of: $1) } >= limits.readBatchBytes
    }

    /// Up to `limit` entries after `position`; nil when there are none (or the read failed).
    private func read(after position: Int64) async -> [Change]? {
        do {
            let batch = try await log.changes(
                after: position, limit: limits.readBatch, maxBytes: limits.readBatchBytes)
            return batch.isEmpty ? nil : batch
        } catch {
            logger("the change feed could not read the change log: \(error)")
            return nil
        }
    }

    /// Marks since when each backed-up stream that the log has moved past has been waiting, and
    /// ends those that waited longer than the limit; true when some still wait. While the streams
    /// hold more than half of ``EventLimits/heldBytes``, every stream behind is waited for, and cut
    /// (dropping what it holds) once its client has read nothing for
    /// ``EventLimits/stalledStreamGrace``.
    private func waitForSlowReaders(_ backedUp: [Stream]) async -> Bool {
        guard !backedUp.isEmpty, let last = try? await log.window().last else { return false }
        let now = ContinuousClock.now
        let overBudget = holdsTooMuch
        var waiting = false
        var cut = 0
        defer {
            if cut > 0 {
                logger(
                    "\(cut) event stream(s) that did not read were cut: the streams held over half of --events-memory"
                )
            }
        }
        for stream in backedUp where overBudget || stream.position < last {
            // Over the budget, what counts is whether the client reads at all, not how far behind.
            let taken = stream.sink.bytesTaken
            if overBudget, let stalled = stream.stalled, stalled.taken == taken,
                now - stalled.since > min(limits.stalledStreamGrace, limits.slowReaderTimeout)
            {
                if stream.sink.cut() { cut += 1 }
                continue
            }
            if let since = stream.backedUpSince, now - since > limits.slowReaderTimeout {
                stream.sink.finish(EventFormat.farewell(stream.delivered))
                continue
            }
            waiting = true
            if stream.backedUpSince == nil || stream.stalled?.taken != taken {
                state.withLock { state in
                    guard var current = state.streams[stream.id] else { return }
                    if current.backedUpSince == nil { current.backedUpSince = now }
                    if current.stalled?.taken != taken { current.stalled = (now, taken) }
                    state.streams[stream.id] = current
                }
            }
        }
        return waiting
    }

    /// Records where each stream stands after a round.
    private func record(_ outcomes: [Outcome]) {
        let now = ContinuousClock.now
        state.withLock { state in
            for outcome in outcomes {
                // In place: no copy of the stream in and out of the dictionary.
                state.streams[outcome.id]?.record(outcome, now: now)
            }
        }
    }

    private static let groupCollection = "FFUserGroup"

    /// Where the first change to a user or a group is in a batch.
    static func firstMembershipChange(in batch: [Change]) -> Int? {
        batch.firstIndex { change in
            change.operation != .revoke
                && (change.collection == groupCollection || change.collection == "FFUser")
        }
    }

    /// Reads again who the callers of `user`'s streams are (of every logged-in stream when nil,
    /// after a group changed); a stream whose user is gone or deactivated ends.
    private func refreshCallers(of user: String?) async {
        let streams = state.withLock { state in
            state.streams.values.filter { stream in
                guard let caller = stream.caller else { return false }
                return user == nil || caller.userGuid == user
            }
        }
        for stream in streams {
            guard let caller = stream.caller else { continue }
            guard let fresh = await refreshCaller(caller) else {
                stream.sink.finish(Array(": the account is no longer active\n\n".utf8))
                continue
            }
            state.withLock { state in
                guard var current = state.streams[stream.id] else { return }
                current.viewer = Stream.Viewer(caller: fresh, subscriptions: current.subscriptions)
                state.streams[stream.id] = current
            }
            // Rights lost through a group (or the admin flag) are not a change to any object the
            // client shows, so no object's event can say `leave`: the client is told to fetch again.
            if !Set(caller.groups).isSubset(of: fresh.groups) || (caller.isAdmin && !fresh.isAdmin) {
                let position = stream.position
                _ = stream.sink.send(
                    EventFormat.accessReduced(last: position),
                    farewell: EventFormat.farewell(stream.delivered))
            }
        }
    }
}

extension RoostError {
    static func tooManyStreams(_ limit: Int) -> RoostError {
        RoostError(
            status: 429, code: .tooManyStreams,
            message:
                "You have \(limit) event streams open, the most allowed; close one or subscribe to more in one stream.",
            details: details(["limit": .integer(Int64(limit))]))
    }

    static func tooManyStreamsFromClient(_ limit: Int) -> RoostError {
        RoostError(
            status: 429, code: .tooManyStreams,
            message:
                "Your network address holds \(limit) event streams, the most allowed for one address; close one or subscribe to more in one stream.",
            details: details(["limit": .integer(Int64(limit)), "per": .string("client")]))
    }

    static func tooManySubscriptions(_ limit: Int) -> RoostError {
        RoostError(
            status: 400, code: .tooManySubscriptions,
            message: "A stream may carry at most \(limit) subscriptions; open another stream for the rest.",
            details: details(["limit": .integer(Int64(limit))]))
    }
}
