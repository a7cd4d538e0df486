import RoostCore
import RoostJSON

/// `ff.getAppMetaData()` and `ff.executeFFDL(text)`, as FatFractal's gettingstarted cleanup uses
/// them, and the `system` user that `ff.getActiveUser()` answers for the system's own calls.
extension FatFractalScriptAPI {
    /// FatFractal's user `system`, what scripts see of a caller who logged in as the system.
    static let systemUser = JSONValue.object(
        JSONObject(uniqueMembers: [
            ("clazz", .string(AccountService.userCollection)), ("guid", .string(SystemLogin.userName)),
            ("userName", .string(SystemLogin.userName)),
        ]))

    /// Metadata for everyone (rules and scripts for administrators and system scripts); FFDL only
    /// with system or administrator rights.
    func metadataCall(_ call: ScriptCall) async throws -> JSONValue {
        if call.method == "getAppMetaData" {
            try call.expectCount(0)
            return FatFractalMetadata.metadata(
                of: objects.definitions.definition, administrator: rights?.isAdmin == true)
        }
        try call.expectCount(1)
        guard case .string(let text) = call.arguments[0] else {
            throw call.invalid(0, "must be FFDL text (statements separated by newlines)")
        }
        guard let rights, rights.isAdmin else {
            throw RoostError.forbidden(
                "Only scripts with system rights (\"runAs\": \"system\") or run by an administrator change the app definition."
            )
        }
        guard let definitionChanges = services.definitionChanges else {
            throw RoostError.scriptServiceNotConfigured(call.method, service: "a changeable app definition")
        }
        return try await definitionChanges.execute(ffdl: text, by: rights).summary
    }
}
