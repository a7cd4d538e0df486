import Foundation
import RoostCore
import RoostHTTP
import RoostJSON
import RoostStore
import Synchronization

/// The one place where errors become HTTP responses, and where they are logged.
///
/// Known errors keep their status and code; anything else is logged once, with the request id,
/// method and route (never the path or body, which may hold user data), and answered as a bare
/// 500 `internal`, so no internals reach the client. Refusals (4xx) are logged at `debug`.
struct ErrorBoundary: Sendable {
    let logger: Logger
    let requestIDs: RequestIDs
    private let lastDiskFullLog = DiskFullLog()

    init(logger: Logger, requestIDs: RequestIDs) {
        self.logger = logger
        self.requestIDs = requestIDs
    }

    /// The answer to an error a handler threw, logged as its kind deserves.
    func response(for error: any Error, request: Request) -> Response {
        let roostError = Self.roostError(for: error, request: request)
        if roostError.code == RoostError.internalError.code {
            logger.error(
                "\(request.method) \(request.route ?? "-") failed: \(String(describing: error))",
                requestID: request.requestID)
        } else if roostError.code == RoostError.insufficientStorage.code {
            logDiskFull()
        } else {
            logger.debug(
                "\(request.method) \(request.route ?? "-") refused",
                requestID: request.requestID,
                fields: [("status", String(roostError.status)), ("code", roostError.code.rawValue)])
        }
        return Self.render(roostError)
    }

    /// The answer to an error without logging it: for a caller that records the answer and
    /// rethrows the error when it is a 5xx, so that the router's boundary logs it once.
    static func quietResponse(for error: any Error, request: Request) -> Response {
        render(roostError(for: error, request: request))
    }

    private static func roostError(for error: any Error, request: Request) -> RoostError {
        switch error {
        case let error as RoostError:
            return error
        case let error as JSONParseError:
            return .invalidJSON(error)
        case let error as StoreError where RoostError.translating(error) != nil:
            return RoostError.translating(error)!
        case is CancellationError:
            // The client went away (or the server is stopping); nobody reads this answer.
            return .shuttingDown
        case RoutingError.notFound:
            return RoostError(
                status: 404, code: .notFound,
                message: "There is no endpoint at this path; check the URL against /openapi.json.")
        case RoutingError.missingParameter(let name):
            return RoostError(
                status: 400, code: .invalidParameter,
                message: "This endpoint needs the path parameter '\(name)'; check the URL against /openapi.json."
            )
        case RoutingError.methodNotAllowed(let allowed):
            return RoostError(
                status: 405, code: .methodNotAllowed,
                message:
                    "This endpoint does not accept \(request.method); use one of \(allowed.joined(separator: ", ")).",
                details: JSONObject(uniqueMembers: [("allowed", .array(allowed.map(JSONValue.string)))]))
        case let error where StorageFailure.isOutOfSpace(error):
            return .insufficientStorage
        default:
            return .internalError
        }
    }

    /// The error's answer: its status, its JSON body and the header fields it names.
    static func render(_ roostError: RoostError) -> Response {
        var response = Response.json(roostError.status, roostError.jsonBody)
        for header in roostError.headers { response.headers.set(header.name, header.value) }
        return response
    }

    /// The 507 answer for a streamed body that found the disk full, given by the HTTP layer.
    static let diskFull = HTTPProtocolError(
        status: 507, code: RoostError.insufficientStorage.code,
        message: RoostError.insufficientStorage.message, retryAfter: RoostError.insufficientStorageRetryAfter)

    /// When "disk full" was last logged.
    private final class DiskFullLog: Sendable {
        let last = Mutex<ContinuousClock.Instant?>(nil)
    }

    /// Says "disk full" at most once a minute: a full disk fails every write, and a line per
    /// request would flood the log (which may sit on the same disk).
    private func logDiskFull() {
        let now = ContinuousClock.now
        let due = lastDiskFullLog.last.withLock { last in
            if let last, now - last < .seconds(60) { return false }
            last = now
            return true
        }
        if due {
            logger.warn("the disk under the data folder is full; writes answer 507 until space is freed")
        }
    }

    /// Protocol errors raised by the HTTP layer, in the same shape, with a request id of their own.
    func protocolResponse(_ error: HTTPProtocolError) -> Response {
        var roostError = RoostError(status: error.status, code: error.code, message: error.message)
        if let seconds = error.retryAfter { roostError = roostError.retrying(after: seconds) }
        if error == Self.diskFull { logDiskFull() }
        var response = Self.render(roostError)
        // The access log records the refusal under this id.
        response.headers.add(RequestIDs.header, requestIDs.next())
        return response
    }
}
