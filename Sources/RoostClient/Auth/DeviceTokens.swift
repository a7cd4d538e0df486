import Foundation

/// A token as seed 003's token resource describes it; the secret itself only in ``token``, once.
public struct DeviceToken: Codable, Sendable, Equatable {
    /// The token's id, for checking and revoking it later.
    public let id: String
    /// The user the token belongs to.
    public let userGuid: String
    /// The device the token is bound to.
    public let deviceId: String
    /// Milliseconds since 1970.
    public let expiresAt: Int64
    /// The secret: present only in the answer that issued it.
    public let token: String?
    /// Whether this is the token the request was sent with (in lists and checks).
    public let current: Bool?
}

extension Roost {
    /// Seed 003's `POST /ff/tokens`: logs in with an email or user name and adopts the token,
    /// bound to this device (and `manufacturerId`, if given).
    @discardableResult
    public func issueToken(identifier: String, password: String, manufacturerId: String? = nil) async throws
        -> DeviceToken
    {
        var body: [String: JSON] = [
            identifier.contains("@") ? "email" : "userName": .string(identifier),
            "password": .string(password),
            "deviceId": .string(deviceId), "deviceType": .string(configuration.deviceType),
        ]
        if let manufacturerId { body["manufacturerId"] = .string(manufacturerId) }
        if configuration.requestsRefreshTokens { body["refresh"] = .bool(true) }
        let sentAt = configuration.now()
        let response = try await transport.send(try Self.jsonRequest("POST", "/ff/tokens", body: body))
        guard response.status == 201 else { throw RoostError.from(response) }
        let issued = try Wire.decode(DeviceToken.self, from: response.body)
        guard issued.token != nil else {
            throw RoostError(
                status: nil, code: RoostError.Code.invalidResponse, message: "The issued token has no secret."
            )
        }
        // The user's name comes from the session; until then the guid stands in.
        try adopt(
            try Wire.decode(IssuedTokens.self, from: response.body),
            user: RoostUser(guid: issued.userGuid, userName: issued.userGuid), sentAt: sentAt)
        if let user = try? await session(), var named = credential, named.userGuid == user.guid {
            named.userName = user.userName
            try adopt(named, user: user, access: refresh.access)
        }
        return issued
    }

    /// `GET /ff/tokens/{id}`: the token while it is valid, nil once it expired or was revoked.
    public func token(id: String) async throws -> DeviceToken? {
        do {
            let response = try await perform(
                TransportRequest(method: "GET", path: "/ff/tokens/\(Self.pathSegment(id))"),
                retryingAfterLogin: false)
            return try Wire.decode(DeviceToken.self, from: response.body)
        } catch let error as RoostError where error.status == 404 {
            return nil
        }
    }

    /// The user's live tokens, one per device.
    public func tokens() async throws -> [DeviceToken] {
        struct Page: Decodable { let items: [DeviceToken] }
        let response = try await perform(
            TransportRequest(method: "GET", path: "/ff/tokens"), retryingAfterLogin: false)
        return try Wire.decode(Page.self, from: response.body).items
    }

    /// `DELETE /ff/tokens/{id}`: revokes a token of the user's (another device's, say).
    public func revokeToken(id: String) async throws {
        _ = try await perform(
            TransportRequest(method: "DELETE", path: "/ff/tokens/\(Self.pathSegment(id))"),
            retryingAfterLogin: false)
    }

    static func pathSegment(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .pathSegment) ?? text
    }
}
