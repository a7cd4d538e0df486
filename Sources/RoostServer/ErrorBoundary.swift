import Foundation
import RoostCore
import RoostHTTP
import RoostJSON
import RoostStore
import Synchronization

/// The one place where errors become HTTP responses.
///
/// Known errors keep their status and code; anything else is logged with its detail and
/// answered as a bare 500 `internal`, so no internals reach the client.
enum ErrorBoundary {
    static func response(for error: any Error, request: Request) -> Response {
        let roostError: RoostError
        switch error {
        case let error as RoostError:
            roostError = error
        case let error as JSONParseError:
            roostError = .invalidJSON(error)
        case let error as StoreError where RoostError.translating(error) != nil:
            roostError = RoostError.translating(error)!
        case is CancellationError:
            // The client went away (or the server is stopping); nobody reads this answer.
            roostError = .shuttingDown
        case RoutingError.notFound:
            roostError = RoostError(
                status: 404, code: "not_found",
                message: "There is no endpoint at this path; check the URL against the README.")
        case RoutingError.methodNotAllowed(let allowed):
            roostError = RoostError(
                status: 405, code: "method_not_allowed",
                message:
                    "This endpoint does not accept \(request.method); use one of \(allowed.joined(separator: ", ")).",
                details: JSONObject(uniqueMembers: [("allowed", .array(allowed.map(JSONValue.string)))]))
        case let error where StorageFailure.isOutOfSpace(error):
            logDiskFull()
            roostError = .insufficientStorage
        default:
            // Only the method and route go to the log: the path may hold user data.
            let line =
                "error: \(request.method) \(request.route ?? "-") failed: \(String(describing: error))\n"
            FileHandle.standardError.write(Data(line.utf8))
            roostError = .internalError
        }
        var response = Response.json(roostError.status, roostError.jsonBody)
        switch roostError.code {
        case "server_busy", "shutting_down":
            response.headers.set("Retry-After", String(roostError.details["retryAfter"]?.integerValue ?? 1))
        case "too_many_attempts":
            response.headers.set("Retry-After", String(roostError.details["retryAfter"]?.integerValue ?? 60))
        case "insufficient_storage":
            response.headers.set("Retry-After", String(RoostError.insufficientStorageRetryAfter))
        case "invalid_token":
            response.headers.set("WWW-Authenticate", "Bearer realm=\"roost\", error=\"invalid_token\"")
        case "login_required":
            response.headers.set("WWW-Authenticate", "Bearer realm=\"roost\"")
        default:
            break
        }
        return response
    }

    /// The 507 answer for a streamed body that found the disk full, given by the HTTP layer.
    static let diskFull = HTTPProtocolError(
        status: 507, code: RoostError.insufficientStorage.code,
        message: RoostError.insufficientStorage.message)

    private static let lastDiskFullLog = Mutex<ContinuousClock.Instant?>(nil)

    /// Says "disk full" on standard error at most once a minute: a full disk fails every write,
    /// and a line per request would flood the log (which may sit on the same disk).
    private static func logDiskFull() {
        let now = ContinuousClock.now
        let due = lastDiskFullLog.withLock { last in
            if let last, now - last < .seconds(60) { return false }
            last = now
            return true
        }
        if due {
            let line =
                "roost: the disk under the data folder is full; writes answer 507 until space is freed\n"
            FileHandle.standardError.write(Data(line.utf8))
        }
    }

    /// Protocol errors raised by the HTTP layer, in the same shape.
    static func protocolResponse(_ error: HTTPProtocolError) -> Response {
        let body = RoostError(status: error.status, code: error.code, message: error.message).jsonBody
        var response = Response.json(error.status, body)
        if error == diskFull {
            logDiskFull()
            response.headers.set("Retry-After", String(RoostError.insufficientStorageRetryAfter))
        }
        return response
    }
}
