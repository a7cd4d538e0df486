import Foundation

extension Roost {
    /// Asks for a new verification mail: for the logged-in user's own address, or, logged out,
    /// for `email` (the server answers the same whether or not an account has it).
    public func requestEmailVerification(email: String? = nil) async throws {
        var body: [String: JSON] = [:]
        if let email { body["email"] = .string(email) }
        try await post("/ff/email/verify/request", body, expecting: 202)
    }

    /// Verifies the address with the token from the mail's link. Logged in, the cached user is
    /// refreshed by the next ``session()``.
    public func confirmEmailVerification(token: String) async throws {
        try await post("/ff/email/verify/confirm", ["token": .string(token)], expecting: 200)
    }

    /// Asks to change the logged-in user's address, confirming with the password: the server
    /// mails a link to `newEmail` and a notice to the old address. Nothing changes until the
    /// link is opened (``confirmEmailChange(token:)``).
    public func changeEmail(to newEmail: String, password: String) async throws {
        try await post(
            "/ff/email/change", ["newEmail": .string(newEmail), "password": .string(password)], expecting: 202
        )
    }

    /// Applies an address change with the token from the mail's link; returns the new address.
    /// `.conflict` when another account took the address meanwhile.
    @discardableResult
    public func confirmEmailChange(token: String) async throws -> String {
        let response = try await post("/ff/email/change/confirm", ["token": .string(token)], expecting: 200)
        return (try? JSONDecoder().decode(JSON.self, from: response.body))?["email"]?.stringValue ?? ""
    }

    @discardableResult
    private func post(_ path: String, _ body: [String: JSON], expecting status: Int) async throws
        -> TransportResponse
    {
        let response = try await send(try Self.jsonRequest("POST", path, body: body))
        guard response.status == status else { throw RoostError.from(response) }
        return response
    }
}
