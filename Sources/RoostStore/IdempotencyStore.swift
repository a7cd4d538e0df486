/// A response kept for an `Idempotency-Key`, replayed when the same request comes again.
public struct RecordedResponse: Sendable, Equatable {
    public var status: Int
    /// Header lines worth replaying (content type, ETag, Location), as name/value pairs.
    public var headers: [(String, String)]
    public var body: [UInt8]

    public init(status: Int, headers: [(String, String)], body: [UInt8]) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    public static func == (lhs: RecordedResponse, rhs: RecordedResponse) -> Bool {
        lhs.status == rhs.status && lhs.body == rhs.body
            && lhs.headers.map { "\($0.0): \($0.1)" } == rhs.headers.map { "\($0.0): \($0.1)" }
    }
}

/// The `Idempotency-Key` of the request a write runs for. Object writes mark the key as run
/// inside their own transaction, so a crash between that commit and the recording of the answer
/// cannot let the write run twice.
public struct IdempotencyMark: Sendable, Equatable {
    public let scope: String
    public let key: String

    public init(scope: String, key: String) {
        self.scope = scope
        self.key = key
    }
}

/// What a reservation of a key found.
public enum IdempotencyReservation: Sendable, Equatable {
    /// The key is new (or expired, or abandoned by a crash): run the request.
    case reserved
    /// The request ran before; here is its response.
    case completed(RecordedResponse)
    /// The same key is being run by another request right now.
    case inProgress
    /// The key was used for a different request.
    case mismatch
    /// The request's write committed, but its process died before the answer was recorded.
    case ranWithoutAnswer
}

/// Keys of idempotent writes, per caller.
public protocol IdempotencyStore: Sendable {
    /// Claims `key` for one run of the request with this fingerprint. Entries created before
    /// `expiredBefore` are forgotten; a run still pending since before `abandonedBefore` is taken
    /// to have died with its process.
    func reserve(
        scope: String, key: String, fingerprint: [UInt8], now: Int64, expiredBefore: Int64,
        abandonedBefore: Int64
    ) async throws -> IdempotencyReservation
    /// Records the response of a reserved run.
    func complete(scope: String, key: String, response: RecordedResponse) async throws
    /// Forgets a reserved run that failed in a way worth retrying (a 5xx).
    func release(scope: String, key: String) async throws
    /// Removes entries created before `cutoff`; returns how many.
    @discardableResult
    func purge(createdBefore cutoff: Int64) async throws -> Int
}

extension RecordedResponse {
    // Header names and values never hold a newline (the HTTP parser refuses them), so one line a
    // header is unambiguous.
    public static func encodeHeaders(_ headers: [(String, String)]) -> String {
        headers.map { "\($0.0): \($0.1)" }.joined(separator: "\n")
    }

    public static func decodeHeaders(_ text: String) -> [(String, String)] {
        text.split(separator: "\n").compactMap { line in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            return (String(line[..<colon]), String(line[line.index(after: colon)...].dropFirst()))
        }
    }
}
