/// A failure's stable snake_case code, as the server sends it in `{"code": …}` and the SDK
/// decodes it: one type for every throw site and every reader, with the known codes as statics
/// and open to new ones (a code a newer server sends decodes as itself).
public struct ErrorCode: RawRepresentable, Hashable, Sendable, Codable, ExpressibleByStringLiteral,
    CustomStringConvertible
{
    public let rawValue: String

    public init(rawValue: String) { self.rawValue = rawValue }
    public init(stringLiteral value: String) { rawValue = value }
    public init(from decoder: any Decoder) throws {
        rawValue = try decoder.singleValueContainer().decode(String.self)
    }
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }

    public var description: String { rawValue }
}

/// The codes the server answers with (docs/api.md's error tables say when each is given).
extension ErrorCode {
    public static let addressNotAllowed: ErrorCode = "address_not_allowed"
    public static let adminRequired: ErrorCode = "admin_required"
    public static let bodyTooLarge: ErrorCode = "body_too_large"
    public static let collectionNotAllowed: ErrorCode = "collection_not_allowed"
    public static let collectionReserved: ErrorCode = "collection_reserved"
    public static let conflict: ErrorCode = "conflict"
    public static let databaseUnavailable: ErrorCode = "database_unavailable"
    public static let deviceNotFound: ErrorCode = "device_not_found"
    public static let dialectHeaderRequired: ErrorCode = "dialect_header_required"
    public static let emailNotVerified: ErrorCode = "email_not_verified"
    public static let expectationFailed: ErrorCode = "expectation_failed"
    public static let ffdlInvalid: ErrorCode = "ffdl_invalid"
    public static let ffdlUnsupported: ErrorCode = "ffdl_unsupported"
    public static let forbidden: ErrorCode = "forbidden"
    public static let grabBagQueryUnsupported: ErrorCode = "grab_bag_query_unsupported"
    public static let groupGuidNotAllowed: ErrorCode = "group_guid_not_allowed"
    public static let groupGuidRetired: ErrorCode = "group_guid_retired"
    public static let headersTooLarge: ErrorCode = "headers_too_large"
    public static let httpVersionNotSupported: ErrorCode = "http_version_not_supported"
    public static let idempotencyKeyInUse: ErrorCode = "idempotency_key_in_use"
    public static let idempotencyKeyLostAnswer: ErrorCode = "idempotency_key_lost_answer"
    public static let idempotencyKeyReused: ErrorCode = "idempotency_key_reused"
    public static let identityNotFound: ErrorCode = "identity_not_found"
    public static let identityTaken: ErrorCode = "identity_taken"
    public static let identityTokenExpired: ErrorCode = "identity_token_expired"
    public static let insufficientStorage: ErrorCode = "insufficient_storage"
    public static let internalError: ErrorCode = "internal"
    public static let invalidBody: ErrorCode = "invalid_body"
    public static let invalidCollection: ErrorCode = "invalid_collection"
    public static let invalidContentType: ErrorCode = "invalid_content_type"
    public static let invalidCredentials: ErrorCode = "invalid_credentials"
    public static let invalidEmailToken: ErrorCode = "invalid_email_token"
    public static let invalidField: ErrorCode = "invalid_field"
    public static let invalidGrabBagRequest: ErrorCode = "invalid_grab_bag_request"
    public static let invalidGuid: ErrorCode = "invalid_guid"
    public static let invalidHost: ErrorCode = "invalid_host"
    public static let invalidIdempotencyKey: ErrorCode = "invalid_idempotency_key"
    public static let invalidIdentityToken: ErrorCode = "invalid_identity_token"
    public static let invalidJson: ErrorCode = "invalid_json"
    public static let invalidParameter: ErrorCode = "invalid_parameter"
    public static let invalidPushToken: ErrorCode = "invalid_push_token"
    public static let invalidQuery: ErrorCode = "invalid_query"
    public static let invalidRefreshToken: ErrorCode = "invalid_refresh_token"
    public static let invalidRequest: ErrorCode = "invalid_request"
    public static let invalidResetToken: ErrorCode = "invalid_reset_token"
    public static let invalidScriptArgument: ErrorCode = "invalid_script_argument"
    public static let invalidText: ErrorCode = "invalid_text"
    public static let invalidToken: ErrorCode = "invalid_token"
    public static let lastSignInMethod: ErrorCode = "last_sign_in_method"
    public static let lengthRequired: ErrorCode = "length_required"
    public static let loginRequired: ErrorCode = "login_required"
    public static let mailNotConfigured: ErrorCode = "mail_not_configured"
    public static let methodNotAllowed: ErrorCode = "method_not_allowed"
    public static let metricsNotAllowed: ErrorCode = "metrics_not_allowed"
    public static let missingField: ErrorCode = "missing_field"
    public static let noEmail: ErrorCode = "no_email"
    public static let nonceMismatch: ErrorCode = "nonce_mismatch"
    public static let nonceReplayed: ErrorCode = "nonce_replayed"
    public static let notConfigured: ErrorCode = "not_configured"
    public static let notFound: ErrorCode = "not_found"
    public static let notImplemented: ErrorCode = "not_implemented"
    public static let passwordNotSet: ErrorCode = "password_not_set"
    public static let providerNotConfigured: ErrorCode = "provider_not_configured"
    public static let providerUnavailable: ErrorCode = "provider_unavailable"
    public static let pushNotConfigured: ErrorCode = "push_not_configured"
    public static let pushTooLarge: ErrorCode = "push_too_large"
    public static let queryTimeout: ErrorCode = "query_timeout"
    public static let rangeNotSatisfiable: ErrorCode = "range_not_satisfiable"
    public static let readOnlyField: ErrorCode = "read_only_field"
    public static let registrationClosed: ErrorCode = "registration_closed"
    public static let requestTimeout: ErrorCode = "request_timeout"
    public static let sameOriginRequired: ErrorCode = "same_origin_required"
    public static let scriptDataTooLarge: ErrorCode = "script_data_too_large"
    public static let scriptFailed: ErrorCode = "script_failed"
    public static let scriptMemory: ErrorCode = "script_memory"
    public static let scriptMessageTooDeep: ErrorCode = "script_message_too_deep"
    public static let scriptRefused: ErrorCode = "script_refused"
    public static let scriptResultTooLarge: ErrorCode = "script_result_too_large"
    public static let scriptsBusy: ErrorCode = "scripts_busy"
    public static let scriptTimeout: ErrorCode = "script_timeout"
    public static let serverBusy: ErrorCode = "server_busy"
    public static let shuttingDown: ErrorCode = "shutting_down"
    public static let tokenExpired: ErrorCode = "token_expired"
    public static let tokenHeaderRequired: ErrorCode = "token_header_required"
    public static let tooManyAttempts: ErrorCode = "too_many_attempts"
    public static let tooManyBlobMembers: ErrorCode = "too_many_blob_members"
    public static let tooManyEmailRequests: ErrorCode = "too_many_email_requests"
    public static let tooManyGroupMembers: ErrorCode = "too_many_group_members"
    public static let tooManyMails: ErrorCode = "too_many_mails"
    public static let tooManyPushDevices: ErrorCode = "too_many_push_devices"
    public static let tooManyPushTargets: ErrorCode = "too_many_push_targets"
    public static let tooManyReferences: ErrorCode = "too_many_references"
    public static let tooManyRegistrations: ErrorCode = "too_many_registrations"
    public static let tooManyResetRequests: ErrorCode = "too_many_reset_requests"
    public static let tooManyScriptRuns: ErrorCode = "too_many_script_runs"
    public static let tooManyStreams: ErrorCode = "too_many_streams"
    public static let tooManySubscriptions: ErrorCode = "too_many_subscriptions"
    public static let unknownKey: ErrorCode = "unknown_key"
    public static let unknownScriptCall: ErrorCode = "unknown_script_call"
    public static let versionMismatch: ErrorCode = "version_mismatch"
    public static let weakPassword: ErrorCode = "weak_password"
    public static let writeContention: ErrorCode = "write_contention"
    public static let wrongAudience: ErrorCode = "wrong_audience"
}

/// The codes the SDK gives for failures on the way to the server (their errors have no status).
extension ErrorCode {
    /// The server could not be reached (no network, refused, host unknown).
    public static let networkUnreachable: ErrorCode = "network_unreachable"
    /// The server did not answer in time.
    public static let timeout: ErrorCode = "timeout"
    /// The server answered with something that is not Roost's.
    public static let invalidResponse: ErrorCode = "invalid_response"
    /// An answer did not decode into the model type.
    public static let decodingFailed: ErrorCode = "decoding_failed"
    /// Local storage (queue, cache, credentials) failed.
    public static let storageFailed: ErrorCode = "storage_failed"
    /// A read found nothing cached while the server could not be reached, and the app chose not to answer it from cached objects.
    public static let offlineNoCache: ErrorCode = "offline_no_cache"
    /// A queued write met a change made elsewhere to the same fields, and the conflict handler gave up; the write was dropped and reported.
    public static let conflictUnresolved: ErrorCode = "conflict_unresolved"
}
