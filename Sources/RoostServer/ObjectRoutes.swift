import RoostCore
import RoostHTTP
import RoostJSON
import RoostQuery
import RoostStore

/// `/ff/resources/...`: FatFractal's object URLs mapped onto ``ObjectService``.
struct ObjectRoutes: Sendable {
    let service: ObjectService
    let blobs: BlobRoutes

    func register(in routes: APIRoutes) {
        routes.writes.on(
            .post, "/ff/resources/:collection", admit: { try await admitCreate($0, $1.principal) }
        ) { try await create($0, $1.principal, $1.idempotency) }
        routes.api.on(.get, "/ff/resources/:collection") { try await list($0, $1.principal) }
        routes.api.on(.get, "/ff/resources/:collection/:guid") { try await read($0, $1.principal) }
        routes.api.on(.get, "/ff/resources/:collection/:guid/:member") { try await member($0, $1.principal) }
        // A query holding '/' (in a string) spans several path segments.
        routes.api.on(.get, "/ff/resources/:collection/*query") { request, context in
            try await find(request, context.principal, query: try request.parameters.require("query"))
        }
        routes.writes.on(.put, "/ff/resources/:collection/:guid") {
            try await replace($0, $1.principal, $1.idempotency)
        }
        routes.writes.on(.patch, "/ff/resources/:collection/:guid") {
            try await patch($0, $1.principal, $1.idempotency)
        }
        routes.writes.on(.delete, "/ff/resources/:collection/:guid") {
            try await delete($0, $1.principal, $1.idempotency)
        }
        routes.writes.on(.put, "/ff/resources/:collection/:guid/ffACL") {
            try await setACL($0, $1.principal, $1.idempotency)
        }
        routes.writes.on(.delete, "/ff/resources/:collection/:guid/ffACL") {
            try await removeACL($0, $1.principal, $1.idempotency)
        }
        // Any other member is a blob, whose bytes stream to disk as they arrive.
        routes.writes.on(
            .put, "/ff/resources/:collection/:guid/:member", streamingBody: true,
            admit: { try await blobs.admitUpload($0, $1.principal) }
        ) { try await blobs.upload($0, $1.principal, $1.idempotency) }
        routes.writes.on(.delete, "/ff/resources/:collection/:guid/:member") {
            try await blobs.delete($0, $1.principal, $1.idempotency)
        }
    }

    /// Who a write is for, as handlers see it.
    static func origin(of request: Request) -> WriteOrigin {
        WriteOrigin(requestID: request.requestID, client: clientKey(forAddress: request.remoteAddress))
    }

    /// Users are created and deleted through the account endpoints, which keep names and emails
    /// unique; their profiles change here, under the FFUser rules.
    private static func refuseUserCreateOrDelete(_ request: Request) throws {
        if request.parameters["collection"] == AccountService.userCollection {
            throw RoostError.forbidden(
                "FFUser objects are created through /ff/register and deleted with 'roost users delete'.")
        }
    }

    /// What can be decided of a create before its body is read: the collection, and a create
    /// rule that does not look at the body (`loggedIn`, `none`, a group).
    private func admitCreate(_ request: Request, _ principal: Principal?) async throws {
        try Self.refuseUserCreateOrDelete(request)
        let collection = try request.parameters.require("collection")
        try service.checkCreateBeforeBody(in: collection, caller: principal)
    }

    private func create(_ request: Request, _ principal: Principal?, _ key: IdempotencyMark?) async throws
        -> Response
    {
        try Self.refuseUserCreateOrDelete(request)
        let object = try await service.serving(Self.origin(of: request)).create(
            in: try request.parameters.require("collection"), body: try Self.bodyObject(request),
            caller: principal,
            idempotency: key)
        var response = Self.objectResponse(object, status: 201)
        response.headers.set("Location", "/ff/resources/\(object.collection)/\(object.guid)")
        return response
    }

    private func read(_ request: Request, _ principal: Principal?) async throws -> Response {
        if try request.parameters.require("guid").hasPrefix("(") {
            return try await find(request, principal, query: try request.parameters.require("guid"))
        }
        let object = try await service.object(
            in: try request.parameters.require("collection"), guid: try request.parameters.require("guid"),
            caller: principal)
        let depth = try Self.integerParameter(request, "depthRef", default: 0)
        if depth != 0 {
            // Inlined objects change on their own, so the tag is of the whole answer, not the version.
            let document = try await service.inliningReferences(
                [object.document], depth: depth, caller: principal)[0]
            return Self.revalidated(Response.json(200, document), request)
        }
        if let tags = request.headers["If-None-Match"],
            ObjectService.versionMatches(tags, version: object.version)
        {
            var response = Response(status: 304)
            response.headers.set("ETag", Self.etag(object.version))
            return response
        }
        return Self.objectResponse(object, status: 200)
    }

    private func replace(_ request: Request, _ principal: Principal?, _ key: IdempotencyMark?) async throws
        -> Response
    {
        let object = try await service.serving(Self.origin(of: request)).replace(
            in: try request.parameters.require("collection"), guid: try request.parameters.require("guid"),
            body: try Self.bodyObject(request),
            ifMatch: request.headers["If-Match"], caller: principal, idempotency: key)
        return Self.objectResponse(object, status: 200)
    }

    private func patch(_ request: Request, _ principal: Principal?, _ key: IdempotencyMark?) async throws
        -> Response
    {
        let object = try await service.serving(Self.origin(of: request)).patch(
            in: try request.parameters.require("collection"), guid: try request.parameters.require("guid"),
            patch: try Self.bodyObject(request),
            ifMatch: request.headers["If-Match"], caller: principal, idempotency: key)
        return Self.objectResponse(object, status: 200)
    }

    private func delete(_ request: Request, _ principal: Principal?, _ key: IdempotencyMark?) async throws
        -> Response
    {
        try Self.refuseUserCreateOrDelete(request)
        try await service.serving(Self.origin(of: request)).delete(
            in: try request.parameters.require("collection"), guid: try request.parameters.require("guid"),
            ifMatch: request.headers["If-Match"], caller: principal, idempotency: key)
        return Response(status: 204)
    }

    private func list(_ request: Request, _ principal: Principal?) async throws -> Response {
        try await pageResponse(
            try await service.list(try Self.listRequest(request), caller: principal), request, principal)
    }

    /// `GET .../{guid}/ffACL`.
    private func acl(_ request: Request, _ principal: Principal?) async throws -> Response {
        Response.json(
            200,
            try await service.acl(
                in: try request.parameters.require("collection"),
                guid: try request.parameters.require("guid"), caller: principal))
    }

    /// `PUT .../{guid}/ffACL` with `{readUsers, readGroups, writeUsers, writeGroups}`.
    private func setACL(_ request: Request, _ principal: Principal?, _ key: IdempotencyMark?) async throws
        -> Response
    {
        Response.json(
            200,
            try await service.setACL(
                in: try request.parameters.require("collection"),
                guid: try request.parameters.require("guid"),
                body: try Self.bodyObject(request), ifMatch: request.headers["If-Match"], caller: principal,
                idempotency: key))
    }

    /// `DELETE .../{guid}/ffACL`: back to the collection's rules.
    private func removeACL(_ request: Request, _ principal: Principal?, _ key: IdempotencyMark?) async throws
        -> Response
    {
        try await service.removeACL(
            in: try request.parameters.require("collection"), guid: try request.parameters.require("guid"),
            ifMatch: request.headers["If-Match"], caller: principal, idempotency: key)
        return Response(status: 204)
    }

    /// `.../{guid}/BackReferences.{Collection}.{field}`, or `.../({query})/{member}` split oddly by a
    /// '/' inside the query.
    private func member(_ request: Request, _ principal: Principal?) async throws -> Response {
        let guid = try request.parameters.require("guid")
        let member = try request.parameters.require("member")
        if guid.hasPrefix("(") { return try await find(request, principal, query: guid + "/" + member) }
        if member == "ffACL" { return try await acl(request, principal) }
        if !member.hasPrefix("BackReferences.") { return try await blobs.download(request, principal) }
        let parts = member.split(separator: ".", maxSplits: 2).map(String.init)
        guard parts.count == 3, parts[0] == "BackReferences", let field = FieldPath(parts[2]) else {
            throw RoostError(
                status: 404, code: .notFound,
                message:
                    "Use BackReferences.{Collection}.{field} after an object's guid, e.g. BackReferences.Micropost.user."
            )
        }
        let page = try await service.backReferences(
            to: try request.parameters.require("collection"), guid: guid, from: parts[1], field: field,
            try Self.listRequest(request), caller: principal)
        return try await pageResponse(page, request, principal)
    }

    /// `GET /ff/resources/{Collection}/({query})`: an empty result is a 200 with no items;
    /// `({query})/member` answers the objects that member refers to.
    private func find(_ request: Request, _ principal: Principal?, query: String) async throws -> Response {
        if let (text, member) = QueryTraversal.split(query) {
            return try await pageResponse(
                try await service.traverse(
                    query: text, member: member, try Self.listRequest(request), caller: principal),
                request, principal)
        }
        return try await pageResponse(
            try await service.find(query: query, try Self.listRequest(request), caller: principal), request,
            principal)
    }

    private func pageResponse(_ page: Page, _ request: Request, _ principal: Principal?) async throws
        -> Response
    {
        let depth = try Self.integerParameter(request, "depthRef", default: 0)
        var page = page
        if depth != 0 {
            page.documents = try await service.inliningReferences(
                page.documents, depth: depth, caller: principal)
        }
        return Self.revalidated(Self.pageResponse(page), request)
    }

    /// A computed answer's ETag is a digest of its body: it saves the transfer, not the query.
    static func revalidated(_ response: Response, _ request: Request) -> Response {
        var response = response
        let tag = "W/\"\(Sodium.fingerprint(response.body))\""
        response.headers.set("ETag", tag)
        response.headers.set("Cache-Control", "private, no-cache")
        if let tags = request.headers["If-None-Match"],
            tags.split(separator: ",").contains(where: { $0.trimmingCharacters(in: .whitespaces) == tag })
        {
            return Response(status: 304, headers: HTTPHeaders([("ETag", tag)]), body: [])
        }
        return response
    }

    static func listRequest(_ request: Request) throws -> PageRequest {
        PageRequest(
            collection: try request.parameters.require("collection"),
            sort: try sortKeys(request.queryParameter("sort")),
            start: try integerParameter(request, "start", default: 0),
            count: try integerParameter(request, "count", default: 100),
            includeTotal: request.queryParameter("total") == "true")
    }

    static func pageResponse(_ page: Page) -> Response {
        var body: [UInt8] = Array("{\"items\":[".utf8)
        body.reserveCapacity(page.documents.reduce(16) { $0 + $1.count + 1 })
        for (position, document) in page.documents.enumerated() {
            if position > 0 { body.append(UInt8(ascii: ",")) }
            body.append(contentsOf: document)
        }
        body.append(UInt8(ascii: "]"))
        if let total = page.total { body.append(contentsOf: Array(",\"total\":\(total)".utf8)) }
        body.append(UInt8(ascii: "}"))
        return Response.json(200, body)
    }

    static func bodyObject(_ request: Request) throws -> JSONObject {
        let value = try JSONParser.parse(request.body)
        guard case .object(let object) = value else { throw RoostError.notAnObject(found: value.typeName) }
        return object
    }

    static func objectResponse(_ object: StoredObject, status: Int) -> Response {
        var headers = HTTPHeaders()
        headers.set("ETag", etag(object.version))
        headers.set("Cache-Control", "private, no-cache")
        return Response.json(status, object.document, headers: headers)
    }

    static func etag(_ version: Int64) -> String { "\"\(version)\"" }

    static func integerParameter(_ request: Request, _ name: String, default value: Int) throws -> Int {
        guard let text = request.queryParameter(name) else { return value }
        // Digits with an optional '-' (the services judge the range), never '+', spaces or more
        // digits than any sane value has.
        let digits = text.hasPrefix("-") ? text.utf8.dropFirst() : text.utf8[...]
        guard !digits.isEmpty, digits.count <= 18, digits.allSatisfy({ $0 >= 48 && $0 <= 57 }),
            let number = Int(text)
        else {
            throw RoostError.invalidParameter(
                name, "\(name) must be a whole number, not '\(text.prefix(40))'.")
        }
        return number
    }

    /// Parses `sort=field desc,other asc`.
    static func sortKeys(_ text: String?) throws -> [SortField] {
        guard let text, !text.isEmpty else { return [] }
        let parts = text.split(separator: ",")
        guard parts.count <= 8 else { throw RoostError.invalidParameter("sort", "Sort by at most 8 fields.") }
        return try parts.map { part in
            let words = part.split(separator: " ", omittingEmptySubsequences: true)
            guard (1...2).contains(words.count), let field = FieldPath(String(words[0])) else {
                throw RoostError.invalidParameter(
                    "sort",
                    "sort takes 'field asc' or 'field desc' items separated by commas, such as 'createdAt desc'."
                )
            }
            let direction = words.count == 2 ? words[1].lowercased() : "asc"
            guard direction == "asc" || direction == "desc" else {
                throw RoostError.invalidParameter(
                    "sort", "A sort direction is 'asc' or 'desc', not '\(direction.prefix(20))'.")
            }
            return SortField(field: field, descending: direction == "desc")
        }
    }
}
