import RoostCore
import RoostHTTP
import RoostJSON

/// `/ff/admin/...`: what only administrators may do. Users are listed through
/// `/ff/resources/FFUser`, where administrators see every field.
struct AdminRoutes: Sendable {
    let accounts: AccountService

    func register(in routes: APIRoutes) {
        routes.loggedIn.on(.get, "/ff/admin/sessions") { request, context in
            let principal = try context.user()
            guard let user = request.queryParameter("user"), !user.isEmpty else {
                throw RoostError.invalidParameter(
                    "user", "Name the user whose sessions to list: ?user={guid}.")
            }
            let items = try await accounts.sessions(ofUser: user, by: principal).map {
                JSONValue.object(AccountRoutes.describe($0, current: principal))
            }
            return Response.json(
                200, JSONWriter.bytes(.object(JSONObject(uniqueMembers: [("items", .array(items))]))))
        }
        routes.loggedIn.on(.delete, "/ff/admin/sessions/:id") { request, context in
            let principal = try context.user()
            try await accounts.revokeSession(id: try request.parameters.require("id"), by: principal)
            return Response(status: 204)
        }
    }
}
