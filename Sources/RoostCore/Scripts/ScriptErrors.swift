import RoostJSON

/// Errors of server-side scripts as clients see them. A script's own stack trace and message go
/// to the server log with the request id, never to the client.
extension RoostError {
    /// A script refused deliberately: `throw {statusCode: 400, statusMessage: "…"}`. The status
    /// is the script's (kept within 400–599) and the message is the script's own words.
    public static func scriptRefused(status: Int, message: String) -> RoostError {
        let status = (400...599).contains(status) ? status : 400
        return RoostError(
            status: status, code: .scriptRefused, message: String(message.prefix(1000)))
    }

    /// A script threw something else, or an `ff` call it did not catch failed.
    public static func scriptFailed(_ name: String) -> RoostError {
        RoostError(
            status: 500, code: .scriptFailed,
            message:
                "The server-side script '\(name)' failed; the server's log has its error.",
            details: details(["script": .string(name)]))
    }

    /// A script ran past `--script-timeout`; its worker process was killed and replaced.
    public static func scriptTimeout(_ name: String, seconds: Double) -> RoostError {
        RoostError(
            status: 500, code: .scriptTimeout,
            message: "The server-side script '\(name)' did not finish within \(seconds) s and was stopped.",
            details: details(["script": .string(name), "seconds": .number(String(seconds))]))
    }

    /// A script went over `--script-memory`; it was stopped.
    public static func scriptMemory(_ name: String, bytes: Int) -> RoostError {
        RoostError(
            status: 500, code: .scriptMemory,
            message: "The server-side script '\(name)' used more than \(bytes >> 20) MiB and was stopped.",
            details: details(["script": .string(name), "limitBytes": .integer(Int64(bytes))]))
    }

    /// Every script worker is busy and the queue is full.
    public static var scriptsBusy: RoostError {
        RoostError(
            status: 503, code: .scriptsBusy,
            message: "Every server-side script worker is busy. Retry after a second.")
    }

    /// An invocation whose object or request, written as a message to a worker, is over the
    /// channel's frame limit.
    public static func scriptDataTooLarge(_ name: String, bytes: Int) -> RoostError {
        RoostError(
            status: 413, code: .scriptDataTooLarge,
            message:
                "The data for the script '\(name.prefix(100))' comes to more than the \(bytes >> 20) MiB a script worker takes; send less.",
            details: details(["limitBytes": .integer(Int64(bytes))]))
    }

    /// One caller already has `limit` extension runs in progress: the pool is shared fairly.
    public static func tooManyScriptRuns(_ limit: Int) -> RoostError {
        RoostError(
            status: 429, code: .tooManyScriptRuns,
            message:
                "You have \(limit) extension calls in progress, the most one caller may have; wait for one to finish.",
            details: details(["limit": .integer(Int64(limit))]))
    }

    /// A script API call that needs a service this server does not have configured.
    public static func scriptServiceNotConfigured(_ call: String, service: String) -> RoostError {
        RoostError(
            status: 501, code: .notConfigured,
            message: "\(call) needs \(service), which this server does not have configured.",
            details: details(["call": .string(call)]))
    }
}
