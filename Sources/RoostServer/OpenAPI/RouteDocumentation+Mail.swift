extension RouteDocumentation {
    /// Password reset by mail.
    static let mailRoutes: [String: RouteDocumentation] = [
        "POST /ff/password/reset": RouteDocumentation(
            tag: "accounts",
            summary:
                "Mail a single-use reset link (30 minutes) if an account has this address; the answer never says whether one has (503 mail_not_configured without SMTP, 429 too_many_reset_requests)",
            access: .open, requestBody: .schema("PasswordResetRequest"),
            responses: [(202, "Accepted, for every address.", .schema("PasswordResetAccepted"))]),
        "POST /ff/password/reset/confirm": RouteDocumentation(
            tag: "accounts",
            summary:
                "Set a new password with a reset token (registration's password rules); ends every session of the user (400 invalid_reset_token)",
            access: .open, requestBody: .schema("PasswordResetConfirm"),
            responses: [(200, "The password is set.", .schema("PasswordResetDone"))]),
    ]
}
