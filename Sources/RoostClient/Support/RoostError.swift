import Foundation
@_exported import RoostErrorCodes

/// Every failure the SDK reports: the server's error (its HTTP status and stable `code`), or a
/// failure on the way there (`status` nil, codes such as ``Code/networkUnreachable``).
public struct RoostError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The HTTP status, nil when no answer came from the server.
    public let status: Int?
    /// A stable snake_case code: the server's (`.notFound`, `.invalidCredentials`, …) or one of
    /// the SDK's own (`.networkUnreachable`, `.timeout`, …); compare it with the statics.
    public let code: ErrorCode
    /// A sentence for people, saying what to do.
    public let message: String
    /// Details for programs, as the server sent them.
    public let details: [String: JSON]

    /// Creates an error; apps rarely need to.
    public init(status: Int?, code: ErrorCode, message: String, details: [String: JSON] = [:]) {
        self.status = status
        self.code = code
        self.message = message
        self.details = details
    }

    /// The status (when there is one), the code and the message.
    public var description: String {
        status.map { "\($0) \(code): \(message)" } ?? "\(code): \(message)"
    }

    /// The codes, as before ``ErrorCode`` held them all.
    public typealias Code = ErrorCode

    /// Whether sending the same request later may succeed: the network, a timeout, the server's
    /// own failures, throttling, or the same write still running.
    public var isTransient: Bool {
        guard let status else { return code == Code.networkUnreachable || code == Code.timeout }
        return status >= 500 || status == 408 || status == 429 || code == .idempotencyKeyInUse
    }

    /// Whether the server (not the network) answered.
    public var isFromServer: Bool { status != nil }

    /// Whether logging in (again) would help.
    public var needsLogin: Bool { status == 401 }

    /// The error a server response carries, or a generic one for a body that is not Roost's shape.
    static func from(_ response: TransportResponse) -> RoostError {
        struct Body: Decodable {
            let code: ErrorCode
            let message: String
            let details: [String: JSON]?
        }
        if let body = try? JSONDecoder().decode(Body.self, from: response.body) {
            var details = body.details ?? [:]
            var message = body.message
            if let guidance = loginGuidance[body.code] {
                // The server's sentence speaks HTTP ("send Authorization: Bearer …"); an app
                // developer needs the SDK's words. The server's stays in the details.
                details["serverMessage"] = .string(body.message)
                message = guidance
            }
            return RoostError(status: response.status, code: body.code, message: message, details: details)
        }
        return RoostError(
            status: response.status, code: .invalidResponse,
            message:
                "The server answered \(response.status) without a Roost error body; is the URL a Roost server?"
        )
    }

    static let loginGuidance: [ErrorCode: String] = [
        .loginRequired:
            "You need to be logged in to do this. Call login(userName:password:) (or register) first.",
        .invalidToken:
            "Your session has expired or was ended on another device; log in again with login(userName:password:).",
        .tokenExpired:
            "Your session has expired; log in again with login(userName:password:).",
        .invalidRefreshToken:
            "Your session has ended: its refresh token expired, was revoked, or was used on another device (which ends the session for safety). Log in again with login(userName:password:); queued writes wait for it.",
    ]

    static func decodingFailed(_ type: Any.Type, _ error: any Error) -> RoostError {
        RoostError(
            status: nil, code: .decodingFailed,
            message: "The server's answer does not fit \(type): \(Self.summary(of: error)).")
    }

    /// An object of a list or read that does not decode into the app's model, named by its
    /// collection, guid and field.
    static func undecodable(_ object: UndecodableObject) -> RoostError {
        RoostError(
            status: nil, code: .decodingFailed,
            message:
                "\(object.collection) object \(object.guid) does not fit the app's model: \(object.reason). Make the field optional in the model, or fix the stored object.",
            details: [
                "collection": .string(object.collection), "guid": .string(object.guid),
                "field": object.field.map(JSON.string) ?? .null,
            ])
    }

    static func storageFailed(_ what: String, _ error: any Error) -> RoostError {
        RoostError(
            status: nil, code: .storageFailed,
            message:
                "Could not \(what): \(error.localizedDescription). Check the storage folder's permissions and free space."
        )
    }

    static func summary(of error: any Error, below depth: Int = 0) -> String {
        func path(_ context: DecodingError.Context) -> String {
            context.codingPath.dropFirst(depth).map(\.stringValue).joined(separator: ".")
        }
        switch error {
        case DecodingError.keyNotFound(let key, let context):
            let parent = path(context)
            return "missing field '\(parent.isEmpty ? key.stringValue : parent + "." + key.stringValue)'"
        case DecodingError.typeMismatch(let type, let context): return "'\(path(context))' is not \(type)"
        case DecodingError.valueNotFound(_, let context): return "'\(path(context))' is null"
        default: return "the JSON is malformed"
        }
    }
}

extension RoostError: LocalizedError {
    /// ``message``: a sentence for people, saying what went wrong.
    public var errorDescription: String? { message }

    /// What the app (or its user) can do about it, when something helps.
    public var recoverySuggestion: String? {
        switch code {
        case Code.notLoggedIn, Code.invalidToken, Code.tokenExpired, Code.invalidRefreshToken,
            "invalid_credentials":
            return "Log in (again) and retry."
        case Code.networkUnreachable, Code.timeout:
            return
                "Check the network connection; writes made with .queueWhenOffline are sent once it is back."
        case Code.offlineNoCache:
            return
                "Read it once while online, or ask for answers from cached objects (OfflineQueryPolicy.answerFromCachedObjects)."
        case Code.versionMismatch:
            return "Someone else changed the object since it was read: read it again and reapply the change."
        case Code.conflictUnresolved:
            return "Show the conflicting fields (details) to the user and write the chosen values again."
        case Code.decodingFailed:
            return "Make the model's fields optional where stored objects may lack them."
        case Code.storageFailed:
            return "Free some space on the device."
        default:
            return isTransient ? "Try again in a moment." : nil
        }
    }

    /// The name of the field a decoding error is about, dotted for nested fields; `below` skips
    /// the path's first components (the page's `items` and the index).
    static func field(of error: any Error, below depth: Int = 0) -> String? {
        let path: [any CodingKey]
        switch error {
        case DecodingError.keyNotFound(let key, let context): path = context.codingPath + [key]
        case DecodingError.typeMismatch(_, let context), DecodingError.valueNotFound(_, let context),
            DecodingError.dataCorrupted(let context):
            path = context.codingPath
        default: return nil
        }
        let names = path.dropFirst(depth).filter { $0.intValue == nil }.map(\.stringValue)
        return names.isEmpty ? nil : names.joined(separator: ".")
    }
}

/// An object a read left out (or failed on) because it does not decode into the app's model.
public struct UndecodableObject: Sendable, Equatable {
    /// Its collection.
    public let collection: String
    /// Its guid.
    public let guid: String
    /// The field that does not fit, dotted for nested fields; nil when the object is not JSON.
    public let field: String?
    /// What is wrong, in words: "missing field 'text'", "'count' is not Int".
    public let reason: String

    /// A report from its parts.
    public init(collection: String, guid: String, field: String?, reason: String) {
        self.collection = collection
        self.guid = guid
        self.field = field
        self.reason = reason
    }
}

extension ErrorCode {
    /// The server wants a logged-in user for this request.
    @available(*, deprecated, renamed: "loginRequired")
    public static var notLoggedIn: ErrorCode { .loginRequired }
}
