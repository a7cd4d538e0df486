import Foundation

/// Every failure the SDK reports: the server's error (its HTTP status and stable `code`), or a
/// failure on the way there (`status` nil, codes such as ``Code/networkUnreachable``).
public struct RoostError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The HTTP status, nil when no answer came from the server.
    public let status: Int?
    /// A stable snake_case code: the server's (`not_found`, `invalid_credentials`, …) or one of
    /// ``Code``'s client codes.
    public let code: String
    /// A sentence for people, saying what to do.
    public let message: String
    /// Details for programs, as the server sent them.
    public let details: [String: JSON]

    /// Creates an error; apps rarely need to.
    public init(status: Int?, code: String, message: String, details: [String: JSON] = [:]) {
        self.status = status
        self.code = code
        self.message = message
        self.details = details
    }

    /// The status (when there is one), the code and the message.
    public var description: String {
        status.map { "\($0) \(code): \(message)" } ?? "\(code): \(message)"
    }

    /// Codes the SDK itself produces.
    public enum Code {
        /// The server could not be reached (no network, refused, host unknown).
        public static let networkUnreachable = "network_unreachable"
        /// The server did not answer in time.
        public static let timeout = "timeout"
        /// The server answered with something that is not Roost's.
        public static let invalidResponse = "invalid_response"
        /// An answer did not decode into the model type.
        public static let decodingFailed = "decoding_failed"
        /// A query built with ``Query`` is not valid (a bad field name).
        public static let invalidQuery = "invalid_query"
        /// Local storage (queue, cache, credentials) failed.
        public static let storageFailed = "storage_failed"
        /// A queued write was refused by the server for good and dropped.
        public static let notLoggedIn = "login_required"
    }

    /// Whether sending the same request later may succeed: the network, a timeout, the server's
    /// own failures, throttling, or the same write still running.
    public var isTransient: Bool {
        guard let status else { return code == Code.networkUnreachable || code == Code.timeout }
        return status >= 500 || status == 408 || status == 429 || code == "idempotency_key_in_use"
    }

    /// Whether the server (not the network) answered.
    public var isFromServer: Bool { status != nil }

    /// Whether logging in (again) would help.
    public var needsLogin: Bool { status == 401 }

    /// The error a server response carries, or a generic one for a body that is not Roost's shape.
    static func from(_ response: TransportResponse) -> RoostError {
        struct Body: Decodable {
            let code: String
            let message: String
            let details: [String: JSON]?
        }
        if let body = try? JSONDecoder().decode(Body.self, from: response.body) {
            return RoostError(
                status: response.status, code: body.code, message: body.message, details: body.details ?? [:])
        }
        return RoostError(
            status: response.status, code: Code.invalidResponse,
            message:
                "The server answered \(response.status) without a Roost error body; is the URL a Roost server?"
        )
    }

    static func decodingFailed(_ type: Any.Type, _ error: any Error) -> RoostError {
        RoostError(
            status: nil, code: Code.decodingFailed,
            message: "The answer does not decode as \(type): \(Self.summary(of: error)).")
    }

    static func storageFailed(_ what: String, _ error: any Error) -> RoostError {
        RoostError(
            status: nil, code: Code.storageFailed,
            message:
                "Could not \(what): \(error.localizedDescription). Check the storage folder's permissions and free space."
        )
    }

    private static func summary(of error: any Error) -> String {
        switch error {
        case DecodingError.keyNotFound(let key, _): return "missing field '\(key.stringValue)'"
        case DecodingError.typeMismatch(let type, let context):
            return "'\(context.codingPath.map(\.stringValue).joined(separator: "."))' is not \(type)"
        case DecodingError.valueNotFound(_, let context):
            return "'\(context.codingPath.map(\.stringValue).joined(separator: "."))' is null"
        default: return "the JSON is malformed"
        }
    }
}
