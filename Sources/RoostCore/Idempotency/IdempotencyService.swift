import Foundation
import RoostStore
import Synchronization

/// `Idempotency-Key` for writes: the first request with a key runs, later ones with the same key
/// (from the same caller, within 24 hours) get the first one's response instead of running again.
///
/// This is what lets the SDK's offline queue resend a write whose reply was lost without making
/// a second object.
public final class IdempotencyService: Sendable {
    /// How long a key is remembered.
    public static let retention: Int64 = 24 * 60 * 60 * 1000
    /// A run still pending after this long died with its process (a request never runs this long).
    public static let abandonment: Int64 = 2 * 60 * 1000
    /// The longest key accepted.
    public static let maximumKeyLength = 255

    /// A reserved run, to be finished with its response.
    public struct Ticket: Sendable {
        let scope: String
        let key: String

        /// What the run's object write records in its own transaction.
        public var mark: IdempotencyMark { IdempotencyMark(scope: scope, key: key) }
    }

    /// What to do with a request.
    public enum Decision: Sendable {
        /// Run it, then call ``finish(_:with:)`` or ``abandon(_:)``.
        case run(Ticket)
        /// Answer with the response recorded the first time.
        case replay(RecordedResponse)
    }

    let store: any IdempotencyStore
    let clock: any WallClock
    private let lastPurge = Atomic<Int64>(0)

    public init(store: any IdempotencyStore, clock: any WallClock = SystemWallClock()) {
        self.store = store
        self.clock = clock
    }

    /// Reserves `key` for this request, or finds the response of its first run.
    public func begin(
        key: String, caller: Principal?, clientAddress: String, method: String, target: String,
        body: [UInt8]
    ) async throws -> Decision {
        try Self.validate(key: key)
        let now = clock.nowMilliseconds()
        await purgeIfDue(now: now)
        let scope = Self.scope(caller: caller, clientAddress: clientAddress)
        let fingerprint = Self.fingerprint(method: method, target: target, body: body)
        switch try await store.reserve(
            scope: scope, key: key, fingerprint: fingerprint, now: now,
            expiredBefore: now - Self.retention, abandonedBefore: now - Self.abandonment)
        {
        case .reserved: return .run(Ticket(scope: scope, key: key))
        case .completed(let response): return .replay(response)
        case .inProgress: throw RoostError.idempotencyKeyInUse
        case .mismatch: throw RoostError.idempotencyKeyReused
        case .ranWithoutAnswer: throw RoostError.idempotencyKeyLostAnswer
        }
    }

    /// Records the response of a run so repeats get it.
    public func finish(_ ticket: Ticket, with response: RecordedResponse) async throws {
        try await store.complete(scope: ticket.scope, key: ticket.key, response: response)
    }

    /// Forgets a run that failed on the server's side, so a retry runs again.
    public func abandon(_ ticket: Ticket) async {
        try? await store.release(scope: ticket.scope, key: ticket.key)
    }

    /// Whose keys these are: a user's own, or, for anonymous callers, those of the client address
    /// (a guid never holds '@'), so one anonymous client never gets another's answer.
    static func scope(caller: Principal?, clientAddress: String) -> String {
        caller?.userGuid ?? "anonymous@" + clientAddress
    }

    /// What identifies "the same request": method, target and body, hashed.
    public static func fingerprint(method: String, target: String, body: [UInt8]) -> [UInt8] {
        Sodium.sha256(Array("\(method)\n\(target)\n".utf8) + body)
    }

    static func validate(key: String) throws {
        let bytes = key.utf8
        guard !bytes.isEmpty, bytes.count <= maximumKeyLength,
            bytes.allSatisfy({ (0x21...0x7E).contains($0) })
        else { throw RoostError.invalidIdempotencyKey }
    }

    /// Drops expired keys at most once an hour, on the request that notices.
    private func purgeIfDue(now: Int64) async {
        let last = lastPurge.load(ordering: .relaxed)
        guard now - last > 60 * 60 * 1000,
            lastPurge.compareExchange(expected: last, desired: now, ordering: .relaxed).exchanged
        else { return }
        _ = try? await store.purge(createdBefore: now - Self.retention)
    }
}

extension RoostError {
    static let invalidIdempotencyKey = RoostError(
        status: 400, code: .invalidIdempotencyKey,
        message:
            "An Idempotency-Key is 1 to \(IdempotencyService.maximumKeyLength) visible ASCII characters; a UUID is a good choice."
    )
    static let idempotencyKeyInUse = RoostError(
        status: 409, code: .idempotencyKeyInUse,
        message:
            "A request with this Idempotency-Key is still running; retry in a moment to get its response."
    )
    static let idempotencyKeyLostAnswer = RoostError(
        status: 409, code: .idempotencyKeyLostAnswer,
        message:
            "The write with this Idempotency-Key was made, but the server stopped before recording its answer; read the object to see it."
    )
    static let idempotencyKeyReused = RoostError(
        status: 422, code: .idempotencyKeyReused,
        message:
            "This Idempotency-Key was already used for a different request; use a new key for each distinct write."
    )
}
