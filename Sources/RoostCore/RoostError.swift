@_exported import RoostErrorCodes
import RoostJSON
import RoostQuery

/// A failure users see: an HTTP status, a stable snake_case code, a sentence saying what to do,
/// and details for programs. It never carries secrets, SQL or stack traces.
public struct RoostError: Error, Sendable, Equatable, CustomStringConvertible {
    public let status: Int
    public let code: ErrorCode
    public let message: String
    public let details: JSONObject
    /// Header fields the answer carries (`Retry-After`, `WWW-Authenticate`, `Allow`): the error
    /// says them itself, so the boundary renders every error the same way.
    public var headers: [ErrorHeader]

    public init(
        status: Int, code: ErrorCode, message: String, details: JSONObject = JSONObject(),
        headers: [ErrorHeader] = []
    ) {
        self.status = status
        self.code = code
        self.message = message
        self.details = details
        self.headers = headers
    }

    /// The error with `Retry-After: seconds`.
    public func retrying(after seconds: Int) -> RoostError {
        var error = self
        error.headers.append(ErrorHeader(name: "Retry-After", value: String(seconds)))
        return error
    }

    public var description: String { "\(status) \(code): \(message)" }

    /// The error as the JSON body of DESIGN.md's error shape.
    public var jsonBody: [UInt8] {
        JSONWriter.bytes(
            .object(
                JSONObject(uniqueMembers: [
                    ("status", .integer(Int64(status))), ("code", .string(code.rawValue)),
                    ("message", .string(message)),
                    ("details", .object(details)),
                ])))
    }

    /// One header field of an error's answer.
    public struct ErrorHeader: Sendable, Equatable {
        public let name: String
        public let value: String

        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    static func details(_ pairs: KeyValuePairs<String, JSONValue>) -> JSONObject {
        JSONObject(uniqueMembers: pairs.map { ($0.key, $0.value) })
    }

    public static func invalidJSON(_ error: JSONParseError) -> RoostError {
        RoostError(
            status: 400, code: .invalidJson,
            message: "The body is not valid JSON: \(error.reason) at byte \(error.offset).",
            details: details(["offset": .integer(Int64(error.offset))]))
    }

    public static func notAnObject(found: String) -> RoostError {
        RoostError(
            status: 400, code: .invalidBody, message: "The body must be a JSON object, not a \(found).",
            details: details(["found": .string(found)]))
    }

    public static func invalidCollection(_ name: String) -> RoostError {
        RoostError(
            status: 400, code: .invalidCollection,
            message:
                "Collection names start with a letter and use only letters, digits and '_' (at most 64 characters).",
            details: details(["collection": .string(String(name.prefix(100)))]))
    }

    public static func notFound(collection: String, guid: String) -> RoostError {
        RoostError(
            status: 404, code: .notFound, message: "There is no object '\(guid)' in '\(collection)'.",
            details: details(["collection": .string(collection), "guid": .string(guid)]))
    }

    public static func readOnlyField(_ field: String) -> RoostError {
        RoostError(
            status: 400, code: .readOnlyField,
            message:
                "'\(field)' is metadata that Roost maintains; leave it out of the body or send it unchanged.",
            details: details(["field": .string(field)]))
    }

    public static func invalidGuid(_ guid: String) -> RoostError {
        RoostError(
            status: 400, code: .invalidGuid,
            message: "A guid uses only letters, digits, '-' and '_' (at most 64 characters).",
            details: details(["guid": .string(String(guid.prefix(100)))]))
    }

    public static func conflict(collection: String, guid: String) -> RoostError {
        RoostError(
            status: 409, code: .conflict, message: "An object '\(guid)' already exists in '\(collection)'.",
            details: details(["collection": .string(collection), "guid": .string(guid)]))
    }

    public static func versionMismatch(expected: String, current: Int64) -> RoostError {
        RoostError(
            status: 412, code: .versionMismatch,
            message:
                "The object changed since you read it (it is at version \(current)); fetch it again and retry.",
            details: details(["ifMatch": .string(expected), "currentVersion": .integer(current)]))
    }

    public static func invalidParameter(_ name: String, _ message: String) -> RoostError {
        RoostError(
            status: 400, code: .invalidParameter, message: message,
            details: details(["parameter": .string(name)]))
    }

    /// A query that does not parse or cannot run, pointing at the column where it went wrong.
    public static func invalidQuery(_ error: QueryError, query: String) -> RoostError {
        RoostError(
            status: 400, code: .invalidQuery, message: error.message,
            details: details([
                "column": .integer(Int64(error.column)), "query": .string(String(query.prefix(4096))),
                "expected": .array(error.expected.map(JSONValue.string)),
            ]))
    }

    /// The disk under the data folder is full: writes are refused until space returns; reads go on.
    public static let insufficientStorage = RoostError(
        status: 507, code: .insufficientStorage,
        message:
            "The server is out of disk space and cannot save changes right now; reading still works. Try again later."
    ).retrying(after: insufficientStorageRetryAfter)

    /// Seconds a client is told to wait after ``insufficientStorage``.
    public static let insufficientStorageRetryAfter = 30

    /// The server cannot take this work now (every slot is taken, or memory ran short); the
    /// client should retry after `seconds`, which travels as `Retry-After`.
    public static func serverBusy(retryAfter seconds: Int, message: String) -> RoostError {
        RoostError(
            status: 503, code: .serverBusy, message: message,
            details: details(["retryAfter": .integer(Int64(seconds))])
        ).retrying(after: seconds)
    }

    /// A client named `FFGrabBagItem`, which grab bags keep for themselves.
    public static let collectionReserved = RoostError(
        status: 403, code: .collectionReserved,
        message:
            "FFGrabBagItem holds grab bag memberships: change them with POST /ff/resources/{Collection}/{guid}/{bag} {\"ffUrl\": …, \"AddOrRemove\": \"ADD\"} and read them with GET on that path.",
        details: details(["collection": .string(AppDefinition.grabBagCollection)]))

    public static let internalError = RoostError(
        status: 500, code: .internalError,
        message: "Something went wrong on the server; it has been logged. Try again later.")
}
