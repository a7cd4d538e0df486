import Foundation

/// How a login sends the password.
public enum LoginMethod: Sendable {
    /// `{"userName": …, "password": …}` in the body.
    case json
    /// `Authorization: Basic …`, as seed 002's Vapor app does.
    case basic
}

/// A Roost user as the SDK shows it. Apps with more profile fields read `FFUser` objects with
/// their own model.
public struct RoostUser: RoostModel, Equatable {
    /// Users live in FatFractal's `FFUser` collection.
    public static let collection = "FFUser"

    /// The user's guid.
    public var guid: String
    /// The unique name the user logs in with.
    public var userName: String
    /// The user's email, shown only to the user and admins.
    public var email: String?
    /// Whether the address is verified; nil when the server says nothing (verification off and
    /// the address never verified).
    public var emailVerified: Bool?
    /// Profile field.
    public var firstName: String?
    /// Profile field.
    public var lastName: String?

    /// A user value, as the server describes one.
    public init(
        guid: String, userName: String, email: String? = nil, firstName: String? = nil,
        lastName: String? = nil, emailVerified: Bool? = nil
    ) {
        self.emailVerified = emailVerified
        self.guid = guid
        self.userName = userName
        self.email = email
        self.firstName = firstName
        self.lastName = lastName
    }
}

extension Roost {
    private struct AuthAnswer: Decodable {
        let user: RoostUser
        let emailVerificationRequired: Bool?
    }

    private struct SessionAnswer: Decodable {
        let loggedIn: Bool
        let user: RoostUser?
    }

    /// Creates an account and logs it in on this device. The password is sent once and never kept.
    @discardableResult
    public func register(
        userName: String, password: String, email: String? = nil, profile: [String: JSON] = [:]
    ) async throws -> RoostUser {
        var body = profile
        body["userName"] = .string(userName)
        body["password"] = .string(password)
        if let email { body["email"] = .string(email) }
        return try await authenticate(path: "/ff/register", body: body)
    }

    /// Logs in with a user name; the token (not the password) is kept by the credential store
    /// (for a session that refreshes, the refresh token; its access token stays in memory).
    /// `method` picks how the password travels: in a JSON body, or as HTTP Basic (seed 002).
    @discardableResult
    public func login(userName: String, password: String, method: LoginMethod = .json) async throws
        -> RoostUser
    {
        switch method {
        case .json:
            return try await authenticate(
                path: "/ff/login", body: ["userName": .string(userName), "password": .string(password)])
        case .basic:
            let basic = Data("\(userName):\(password)".utf8).base64EncodedString()
            return try await authenticate(path: "/ff/login", body: [:], authorization: "Basic \(basic)")
        }
    }

    /// Logs in with an email address.
    @discardableResult
    public func login(email: String, password: String) async throws -> RoostUser {
        try await authenticate(
            path: "/ff/login", body: ["email": .string(email), "password": .string(password)])
    }

    func authenticate(path: String, body: [String: JSON], authorization: String? = nil) async throws
        -> RoostUser
    {
        var body = body
        body["deviceId"] = .string(deviceId)
        body["deviceType"] = .string(configuration.deviceType)
        if configuration.requestsRefreshTokens { body["refresh"] = .bool(true) }
        var request = try Self.jsonRequest("POST", path, body: body)
        if let authorization {
            request.headers["Authorization"] = authorization
            // No `WWW-Authenticate` challenge on a failure: URLSession would wait for credentials.
            request.headers["X-Requested-With"] = "RoostClient"
        }
        // Sent as is: a login never carries the old token.
        let sentAt = configuration.now()
        let response = try await transport.send(request)
        guard response.status < 300 else { throw RoostError.from(response) }
        let answer = try Wire.decode(AuthAnswer.self, from: response.body)
        let user = answer.user
        // `--email-verification required`: the account exists, its session waits for the address.
        if answer.emailVerificationRequired == true {
            throw RoostError(
                status: response.status, code: .emailNotVerified,
                message:
                    "The account is created; open the link mailed to its address (confirmEmailVerification(token:)), then log in."
            )
        }
        try adopt(try Wire.decode(IssuedTokens.self, from: response.body), user: user, sentAt: sentAt)
        return user
    }

    /// Revokes this device's token on the server and forgets it and the cache here. Returns
    /// whether the server still knew the token; offline, the token is forgotten all the same.
    /// A session that refreshes is ended by its refresh token too, so an expired access token
    /// needs no exchange first.
    @discardableResult
    public func logout() async throws -> Bool {
        defer { forgetCredential() }
        guard let held = credential else { return false }
        var request = TransportRequest(method: "POST", path: "/ff/logout")
        if let refreshToken = held.refreshToken {
            request = try Self.jsonRequest("POST", "/ff/logout", body: ["refreshToken": refreshToken])
        }
        if let token = currentToken { request = authorized(request, with: token) }
        do {
            let response = try await transport.send(request)
            return (try? JSONDecoder().decode(JSON.self, from: response.body))?["loggedOut"] == .bool(true)
        } catch let error as RoostError where !error.isFromServer {
            return false
        }
    }

    /// Asks the server whether the stored token is still good (seed 004's "am I logged in?").
    /// Returns the user, or nil after forgetting a token the server no longer accepts.
    @discardableResult
    public func session() async throws -> RoostUser? {
        guard credential != nil else { return nil }
        let response = try await send(TransportRequest(method: "GET", path: "/ff/session"))
        guard response.status == 200 else { throw RoostError.from(response) }
        let answer = try Wire.decode(SessionAnswer.self, from: response.body)
        guard answer.loggedIn, let user = answer.user else {
            forgetCredential()
            return nil
        }
        currentUser = user
        return user
    }
}
