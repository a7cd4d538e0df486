import Synchronization

/// Where one stream's bytes go: the HTTP layer's streamed response. A class, so that the feed's
/// copies of it are one reference each.
public protocol EventSink: AnyObject, Sendable {
    /// Queues `bytes`, or `farewell` instead when the client reads too slowly (the stream then
    /// ends); false when the stream has ended or just did.
    func send(_ bytes: [UInt8], farewell: [UInt8]) -> Bool
    /// Sends `bytes` and ends the stream.
    func finish(_ bytes: [UInt8])
    /// Runs `handler` once the stream has ended, for whatever reason.
    func onEnd(_ handler: @escaping @Sendable () -> Void)
    /// Whether the client is behind on reading: the feed waits before sending it more.
    var isBackedUp: Bool { get }
    /// Bytes the client has read so far: while it grows, a client behind is still reading.
    var bytesTaken: Int { get }

    /// As ``send(_:farewell:)``, but nothing is queued when the client is backed up, and the
    /// bytes may wait in `batch` until the feed flushes it (after each change it fans out).
    /// `event`'s bytes are shared by every stream sent them: a sink holds them by reference until
    /// they are written, never a copy of its own.
    func send(_ event: EventBytes, farewell: [UInt8], unlessBackedUp batch: EventBatch) -> EventSendOutcome
    /// As ``finish(_:)``, after whatever this sink has waiting in `batch`.
    func finish(_ bytes: [UInt8], after batch: EventBatch)
    /// Ends the stream now, dropping what waits unsent: its client resumes from the last event it
    /// received whole (an event cut short is never dispatched by an EventSource). False when it
    /// was cut or had ended already.
    @discardableResult
    func cut() -> Bool
}

/// An event's bytes, held once for every stream it goes to, and counted while any holds them:
/// the feed bounds what all streams hold together (``EventLimits/heldBytes``).
public final class EventBytes: Sendable {
    public let bytes: [UInt8]
    private let counter: HeldEventBytes

    init(_ bytes: [UInt8], counter: HeldEventBytes) {
        self.bytes = bytes
        self.counter = counter
        counter.value.add(bytes.count, ordering: .relaxed)
    }

    deinit { counter.value.subtract(bytes.count, ordering: .relaxed) }
}

/// The bytes of the events that streams hold, written or not.
final class HeldEventBytes: Sendable {
    let value = Atomic<Int>(0)
}

/// What a send during a fan-out did.
public enum EventSendOutcome: Sendable, Equatable {
    case sent
    /// The client is behind on reading: nothing was queued.
    case backedUp
    /// The stream has ended, or ends now (its farewell went instead).
    case ended
}

extension EventSink {
    public func send(_ event: EventBytes, farewell: [UInt8], unlessBackedUp batch: EventBatch)
        -> EventSendOutcome
    {
        if isBackedUp { return .backedUp }
        return send(event.bytes, farewell: farewell) ? .sent : .ended
    }

    public func finish(_ bytes: [UInt8], after batch: EventBatch) { finish(bytes) }

    @discardableResult
    public func cut() -> Bool {
        finish([])
        return true
    }
}

/// A sink's way of gathering sends during a fan-out, and of handing them on in one go.
public protocol EventBatchPart: AnyObject {
    func flush()
}

/// The sends of one change to every stream, gathered per kind of sink and handed on together:
/// a thousand streams cost each event loop one job, not a thousand. Used by the fan-out alone.
public final class EventBatch {
    private var parts: [(kind: ObjectIdentifier, part: any EventBatchPart)] = []

    init() {}

    /// The part of this kind, made on first use.
    public func part<Part: EventBatchPart>(_ make: () -> Part) -> Part {
        let kind = ObjectIdentifier(Part.self)
        for entry in parts where entry.kind == kind { return unsafeDowncast(entry.part, to: Part.self) }
        let made = make()
        parts.append((kind, made))
        return made
    }

    /// Hands on everything gathered.
    func flush() {
        for entry in parts { entry.part.flush() }
    }
}

extension ChangeFeed {
    /// One open stream as the feed keeps it: small to copy (two references), since every round
    /// copies them all.
    struct Stream: Sendable {
        let fixed: Fixed
        /// Refreshed when the user or a group changes, so rules see current groups and flags.
        var viewer: Viewer
        /// Every log entry up to here has been considered for this stream.
        var position: Int64
        /// The highest `id:` the client has been sent: where it resumes after a cut.
        var delivered: Int64
        /// Since when the client has been too far behind to be sent more.
        var backedUpSince: ContinuousClock.Instant?
        /// Since when, being behind, it has read nothing, and how much it had read then
        /// (``EventSink/bytesTaken``): a client working through a large event is not stalled.
        var stalled: (since: ContinuousClock.Instant, taken: Int)?

        init(
            id: Int, owner: String, client: String, caller: Principal?, subscriptions: [BoundSubscription],
            sink: any EventSink, position: Int64
        ) {
            fixed = Fixed(id: id, owner: owner, client: client, subscriptions: subscriptions, sink: sink)
            viewer = Viewer(caller: caller, subscriptions: subscriptions)
            self.position = position
            delivered = position
        }

        /// Where a round left the stream.
        mutating func record(_ outcome: Outcome, now: ContinuousClock.Instant) {
            position = max(position, outcome.position)
            delivered = max(delivered, outcome.delivered)
            backedUpSince = outcome.backedUp ? backedUpSince ?? now : nil
            if !outcome.backedUp { stalled = nil }
        }

        var id: Int { fixed.id }
        var owner: String { fixed.owner }
        var subscriptions: [BoundSubscription] { fixed.subscriptions }
        var sink: any EventSink { fixed.sink }
        var caller: Principal? { viewer.caller }

        /// What does not change while the stream is open.
        final class Fixed: Sendable {
            let id: Int
            /// What the per-user limit counts against: the user, or the client address.
            let owner: String
            /// What the per-address limit counts against, whoever is logged in.
            let client: String
            let subscriptions: [BoundSubscription]
            let sink: any EventSink

            init(
                id: Int, owner: String, client: String, subscriptions: [BoundSubscription],
                sink: any EventSink
            ) {
                self.id = id
                self.owner = owner
                self.client = client
                self.subscriptions = subscriptions
                self.sink = sink
            }
        }

        /// Who reads the stream, and the key of what decides its events: streams with equal keys
        /// (the same caller, flags, groups and subscriptions) get the same event for a change.
        /// Made when the stream opens and when its caller is refreshed, not every round.
        final class Viewer: Sendable {
            let caller: Principal?
            let key: String

            init(caller: Principal?, subscriptions: [BoundSubscription]) {
                self.caller = caller
                key = ChangeFeed.viewerKey(caller: caller, subscriptions: subscriptions)
            }
        }
    }
}
