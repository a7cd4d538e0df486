import RoostJSON
import RoostStore

/// What server-side scripts do with accounts (FatFractal's `ff.registerUser`).
extension AccountService {
    /// Creates a user from a registration body (`userName`, `password`, other profile fields)
    /// without logging anyone in. `active: false` leaves the account waiting for activation, as
    /// FatFractal's `autoActivate = false` did. The app's `registration` setting applies unless
    /// `ignoringRegistrationSetting` (a script running with system rights).
    public func createUserForScript(
        _ body: JSONObject, active: Bool, ignoringRegistrationSetting: Bool
    ) async throws -> StoredObject {
        guard ignoringRegistrationSetting || definitions.definition.settings.registration == .open else {
            throw RoostError(
                status: 403, code: .registrationClosed,
                message: "This app does not take new registrations; ask an administrator for an account.")
        }
        return try await createAccount(from: body, reservedFields: active ? [:] : ["active": .bool(false)])
    }
}
