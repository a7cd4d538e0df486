import RoostJSON
import RoostStore

extension RoostError {
    /// A read ran past the statement deadline (`--query-timeout`).
    public static func queryTimeout(seconds: Double) -> RoostError {
        RoostError(
            status: 503, code: .queryTimeout,
            message:
                "The query took longer than \(Self.format(seconds)) s and was stopped. Narrow it (fewer terms, fewer paths through references, an anchored regular expression) or index the fields it filters and sorts on with `roost index create`.",
            details: details(["timeoutSeconds": .string(Self.format(seconds))]))
    }

    /// Every reader thread is busy and the queue of waiting reads is full.
    public static let readersBusy = serverBusy(
        retryAfter: 1, message: "The server has too many queries in progress; try again in a moment.")

    /// The server is shutting down.
    public static let shuttingDown = RoostError(
        status: 503, code: .shuttingDown, message: "The server is shutting down; try again in a moment.",
        details: details(["retryAfter": .integer(1)])
    ).retrying(after: 1)

    /// The database server cannot be reached; the server reconnects by itself meanwhile.
    public static let databaseUnavailable = RoostError(
        status: 503, code: .databaseUnavailable,
        message: "The database cannot be reached right now; try again in a few seconds.",
        details: details(["retryAfter": .integer(Int64(databaseUnavailableRetryAfter))])
    ).retrying(after: databaseUnavailableRetryAfter)

    /// Seconds a client is told to wait after ``databaseUnavailable``.
    public static let databaseUnavailableRetryAfter = 5

    /// What users see of a store failure that has a meaning for them; nil for the rest (which
    /// the error boundary logs and answers as 500).
    public static func translating(_ error: StoreError) -> RoostError? {
        switch error.kind {
        case .timeout(let limit):
            let (seconds, attoseconds) = limit.components
            return queryTimeout(seconds: Double(seconds) + Double(attoseconds) / 1e18)
        case .busy: return readersBusy
        case .closed: return shuttingDown
        case .unavailable: return databaseUnavailable
        case .tooManyDerivedRows(let limit): return tooMany(limit)
        case .unstorableText:
            return RoostError(
                status: 400, code: .invalidText,
                message:
                    "A value in the request holds the character U+0000, which cannot be stored or looked up; remove it."
            )
        case .notFound, .duplicate, .io, .versionChanged: return nil
        }
    }

    private static func tooMany(_ limit: DerivedRows.Limit) -> RoostError {
        switch limit {
        case .references:
            RoostError(
                status: 400, code: .tooManyReferences,
                message:
                    "A document holds at most \(limit.maximum) references (members whose value is {\"ffUrl\": …}); split them across objects."
            )
        case .groupMembers:
            RoostError(
                status: 400, code: .tooManyGroupMembers,
                message: "A group lists at most \(limit.maximum) users; split them across groups.")
        case .blobMembers:
            RoostError(
                status: 400, code: .tooManyBlobMembers,
                message:
                    "An object holds at most \(limit.maximum) blobs; keep further blobs in objects of their own."
            )
        }
    }

    private static func format(_ seconds: Double) -> String {
        seconds == seconds.rounded() ? String(Int(seconds)) : String(seconds)
    }
}
