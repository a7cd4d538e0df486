import RoostJSON

/// What may change on an `FFUser` through the resource API.
enum UserFields {
    /// Fields kept unique by the accounts table; they change through the account endpoints.
    static let accountFields = ["userName", "email", "emailVerified"]
    /// Fields only administrators set.
    static let adminFields = ["active", "admin"]

    /// Refuses a change to a user's account fields, and to admin-only fields by a non-admin.
    static func checkChange(from old: JSONObject, to new: JSONObject, by access: Access) throws {
        for field in accountFields where old[field] != new[field] {
            throw RoostError(
                status: 400, code: .readOnlyField,
                message: "'\(field)' is part of the account and cannot be changed through /ff/resources.",
                details: RoostError.details(["field": .string(field)]))
        }
        guard !access.isAdmin else { return }
        for field in adminFields where old[field] != new[field] {
            throw RoostError.forbidden("Only an administrator can change '\(field)'.")
        }
    }
}
