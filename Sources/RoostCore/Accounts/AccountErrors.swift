import RoostJSON

extension RoostError {
    /// The one answer to every failed login, whether or not the user exists.
    public static let invalidCredentials = RoostError(
        status: 401, code: .invalidCredentials, message: "Invalid user name or password.")

    public static let invalidToken = RoostError(
        status: 401, code: .invalidToken,
        message: "The token is unknown, expired or revoked; log in again to get a new one.",
        headers: [
            ErrorHeader(name: "WWW-Authenticate", value: "Bearer realm=\"roost\", error=\"invalid_token\"")
        ])

    public static let loginRequired = RoostError(
        status: 401, code: .loginRequired,
        message: "This needs a logged-in user; send 'Authorization: Bearer <token>'.",
        headers: [ErrorHeader(name: "WWW-Authenticate", value: "Bearer realm=\"roost\"")])

    /// The failed login of a caller who sent HTTP Basic credentials, challenged as Basic.
    public static let invalidBasicCredentials = RoostError(
        status: 401, code: .invalidCredentials, message: invalidCredentials.message,
        headers: [ErrorHeader(name: "WWW-Authenticate", value: "Basic realm=\"roost\", charset=\"UTF-8\"")])

    public static func tooManyAttempts(retryAfter seconds: Int) -> RoostError {
        RoostError(
            status: 429, code: .tooManyAttempts,
            message: "Too many failed logins; wait \(seconds) seconds before trying again.",
            details: details(["retryAfter": .integer(Int64(seconds))])
        ).retrying(after: seconds)
    }

    /// `Retry-After` carries `retryAfter`. Says nothing of the body: whether its name is taken
    /// or even valid.
    public static func tooManyRegistrations(retryAfter seconds: Int) -> RoostError {
        RoostError(
            status: 429, code: .tooManyRegistrations,
            message:
                "Too many registrations from your address; wait \(seconds) seconds before registering again.",
            details: details(["retryAfter": .integer(Int64(seconds))])
        ).retrying(after: seconds)
    }

    public static func weakPassword(_ rule: String, message: String) -> RoostError {
        RoostError(
            status: 400, code: .weakPassword, message: message, details: details(["rule": .string(rule)]))
    }

    public static func invalidField(_ field: String, _ message: String) -> RoostError {
        RoostError(
            status: 400, code: .invalidField, message: message, details: details(["field": .string(field)]))
    }

    public static func missingField(_ field: String) -> RoostError {
        RoostError(
            status: 400, code: .missingField, message: "'\(field)' is required.",
            details: details(["field": .string(field)]))
    }

    public static func taken(_ field: String) -> RoostError {
        RoostError(
            status: 409, code: .conflict,
            message: "That \(field) is already registered; choose another or log in.",
            details: details(["field": .string(field)]))
    }

    public static func forbidden(_ message: String) -> RoostError {
        RoostError(status: 403, code: .forbidden, message: message)
    }

    public static func tokenNotFound(_ id: String) -> RoostError {
        RoostError(
            status: 404, code: .notFound, message: "There is no live token '\(id.prefix(64))' of yours.",
            details: details(["id": .string(String(id.prefix(64)))]))
    }
}
