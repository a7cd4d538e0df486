import RoostCore
import RoostHTTP
import RoostJSON
import RoostStore

/// `/ff/admin/...`: what only administrators may do, shared by the dashboard (`/_/`) and the
/// command line. Users are listed through `/ff/resources/FFUser`, where administrators see every
/// field, or paged like any collection here.
///
/// Every route checks the admin right at the request's head, before any work; and takes the
/// token only from a header (`Authorization` or `X-Token`), never from a cookie, so another
/// site cannot make a browser send an administrator's request (see ``FatFractalSession``).
struct AdminRoutes: Sendable {
    let accounts: AccountService
    let collections: CollectionAdministration

    func register(in routes: APIRoutes) {
        routes.administrators.on(.get, "/ff/admin/sessions") { request, context in
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
        routes.administrators.on(.delete, "/ff/admin/sessions/:id") { request, context in
            let principal = try context.user()
            try await accounts.revokeSession(id: try request.parameters.require("id"), by: principal)
            return Response(status: 204)
        }
        routes.administrators.on(.get, "/ff/admin/collections") { request, context in
            let exact = try Self.flag(request, "exact")
            let (items, truncated) = try await collections.collections(exact: exact, by: try context.user())
            let described = items.map { item in
                JSONValue.object(
                    JSONObject(uniqueMembers: [
                        ("name", .string(item.name)), ("count", .integer(Int64(item.count))),
                        ("exact", .bool(item.exact)),
                    ]))
            }
            return Response.json(
                200,
                JSONWriter.bytes(
                    .object(
                        JSONObject(uniqueMembers: [
                            ("items", .array(described)), ("truncated", .bool(truncated)),
                            ("countLimit", .integer(Int64(collections.limits.countLimit))),
                        ]))))
        }
        routes.administrators.on(.get, "/ff/admin/collections/:collection/objects") { request, context in
            let page = try await collections.objects(
                in: try request.parameters.require("collection"), after: request.queryParameter("after"),
                before: request.queryParameter("before"),
                limit: request.queryParameter("limit") == nil
                    ? nil : try ObjectRoutes.integerParameter(request, "limit", default: 0),
                filter: request.queryParameter("filter"), by: try context.user())
            var body: [UInt8] = Array("{\"items\":[".utf8)
            body.reserveCapacity(page.documents.reduce(64) { $0 + $1.count + 1 })
            for (position, document) in page.documents.enumerated() {
                if position > 0 { body.append(UInt8(ascii: ",")) }
                body.append(contentsOf: document)
            }
            body.append(contentsOf: Array("],\"next\":".utf8))
            body.append(contentsOf: JSONWriter.bytes(page.next.map(JSONValue.string) ?? .null))
            body.append(contentsOf: Array(",\"previous\":".utf8))
            body.append(contentsOf: JSONWriter.bytes(page.previous.map(JSONValue.string) ?? .null))
            body.append(UInt8(ascii: "}"))
            return Response.json(200, body)
        }
    }

    /// A `?name=1` or `?name=true` switch; absent, `0` or `false` is off.
    static func flag(_ request: Request, _ name: String) throws -> Bool {
        switch request.queryParameter(name) {
        case nil, "0", "false": return false
        case "", "1", "true": return true
        case let other?:
            throw RoostError.invalidParameter(name, "\(name) is 1 or 0, not '\(other.prefix(40))'.")
        }
    }
}

/// `--admin-allow`: administration only from the listed client addresses (as the trusted proxies
/// tell them), refused at the head with 403 `address_not_allowed`.
struct AdminAddresses: RouteMiddleware {
    let allowed: TrustedProxies?

    func prepare(_ request: Request, _ context: inout RequestContext) async throws {
        guard let allowed, !allowed.contains(request.remoteAddress) else { return }
        throw RoostError.addressNotAllowed
    }
}

extension RoostError {
    static let addressNotAllowed = RoostError(
        status: 403, code: .addressNotAllowed,
        message:
            "Administration is not served to this address; roost serve --admin-allow lists the ones it is.")
}

/// Routes for administrators only: 401 `login_required` without a token, 403 `admin_required`
/// for anyone else, both at the head, before the body and before any work.
struct AdminRequired: RouteMiddleware {
    func prepare(_ request: Request, _ context: inout RequestContext) async throws {
        try AccountService.requireAdmin(try context.user())
    }
}
