import Foundation
import RoostCore
import RoostHTTP
import RoostJSON
import RoostQuery

/// FatFractal's grab bags: named sets of object references hanging off an object
/// (`/ff/resources/C/guid/bagName`). Each membership is an object of the `FFGrabBagItem`
/// collection, `{parentUrl, bag, item: {"ffUrl"}}`, whose guid is a digest of the three, so adding
/// twice keeps one. Adding or removing needs the right to update the parent; reading lists the
/// members the caller may read (a traversal, so the members' own rules apply).
extension FatFractalDialect {
    static let grabBagCollection = AppDefinition.grabBagCollection

    /// `(parent ffUrl, bag name)` when the path is `/ff/resources/C/guid/bag`.
    static func grabBagAddress(_ path: Substring) -> (parent: String, bag: String)? {
        let parts = path.split(separator: "/")
        guard parts.count == 5, parts[0] == "ff", parts[1] == "resources", !parts[3].hasPrefix("("),
            FieldPath.isIdentifier(String(parts[4])), parts[4] != "ffACL"
        else { return nil }
        return ("/" + parts[0..<4].joined(separator: "/"), String(parts[4]))
    }

    /// `GET parent/bag/(query)`: not served yet, said plainly rather than as a query error.
    static func isGrabBagQuery(_ path: Substring) -> Bool {
        let parts = path.split(separator: "/", maxSplits: 5)
        return parts.count == 6 && parts[0] == "ff" && parts[1] == "resources" && !parts[3].hasPrefix("(")
            && FieldPath.isIdentifier(String(parts[4])) && parts[5].hasPrefix("(")
    }

    static let grabBagQueryUnsupported = RoostError(
        status: 501, code: .grabBagQueryUnsupported,
        message:
            "Queries inside a grab bag are not supported yet; read the whole bag (GET parent/bag) instead.")

    /// `POST parent/bag` with `{"ffUrl": item, "AddOrRemove": "ADD" | "REMOVE"}`.
    func changeGrabBag(_ request: Request, parent: String, bag: String, next: MiddlewareChain.Next) async
        -> Response
    {
        guard case .object(let body)? = try? JSONParser.parse(request.body),
            let item = body["ffUrl"]?.stringValue.map(FatFractalWire.resourcePath),
            FatFractalWire.collectionName(item) != nil,
            let operation = body["AddOrRemove"]?.stringValue, operation == "ADD" || operation == "REMOVE"
        else {
            let error = RoostError(
                status: 400, code: .invalidGrabBagRequest,
                message:
                    "A grab bag change is {\"ffUrl\": \"/ff/resources/…\", \"AddOrRemove\": \"ADD\" or \"REMOVE\"}."
            )
            return await envelope(ErrorBoundary.render(error), request, session: nil, next: next)
        }
        // A membership is no parent and no member: the dialect's own reads would pass its
        // reservation and tell whether a computed membership exists.
        if FatFractalWire.collectionName(parent) == Self.grabBagCollection
            || FatFractalWire.collectionName(item) == Self.grabBagCollection
        {
            return await envelope(
                ErrorBoundary.render(RoostError.collectionReserved), request, session: nil, next: next)
        }
        let parentAnswer = await next.respond(to: Self.internalRequest(request, .get, parent))
        guard parentAnswer.status == 200, let document = Optional(parentAnswer.body),
            case .object(let object)? = try? JSONParser.parse(document)
        else { return await envelope(parentAnswer, request, session: nil, next: next) }
        let access = Access(caller: await principal(of: request), definition: definitions.definition)
        guard
            access.mayUpdate(
                collection: FatFractalWire.collectionName(parent) ?? "", document: document,
                createdBy: object["createdBy"]?.stringValue, acl: await accessList(of: parent, request, next))
        else {
            let error =
                access.caller == nil
                ? RoostError.loginRequired
                : RoostError.forbidden(
                    "Changing a grab bag needs the right to update the object it belongs to.")
            return await envelope(ErrorBoundary.render(error), request, session: nil, next: next)
        }
        let guid = "gb" + Sodium.fingerprint(Array("\(parent)\n\(bag)\n\(item)".utf8))
        let membership = "/ff/resources/\(Self.grabBagCollection)/\(guid)"
        var answer: Response
        if operation == "ADD" {
            var record = Self.internalRequest(request, .post, "/ff/resources/\(Self.grabBagCollection)")
            record.body = JSONWriter.bytes(
                .object(
                    JSONObject(uniqueMembers: [
                        ("guid", .string(guid)), ("parentUrl", .string(parent)), ("bag", .string(bag)),
                        ("item", .object(JSONObject(uniqueMembers: [("ffUrl", .string(item))]))),
                    ])))
            answer = await next.respond(to: record)
            if answer.status == 409 { answer = Response(status: 201) }
        } else {
            answer = await next.respond(to: Self.internalRequest(request, .delete, membership))
            if answer.status == 404 { answer = Response(status: 204) }
        }
        guard answer.status < 300 else { return await envelope(answer, request, session: nil, next: next) }
        return Response.json(
            200,
            FatFractalWire.envelope(operation == "ADD" ? "Added to grab bag" : "Removed from grab bag", .null)
        )
    }

    /// The members of `parent`'s bag the caller may read, as an array.
    func readGrabBag(_ request: Request, parent: String, bag: String, next: MiddlewareChain.Next) async
        -> Response
    {
        // The bag is part of its parent: who may not read the parent gets the parent's answer.
        if FatFractalWire.collectionName(parent) == Self.grabBagCollection {
            return await envelope(
                ErrorBoundary.render(RoostError.collectionReserved), request, session: nil, next: next)
        }
        let parentAnswer = await next.respond(to: Self.internalRequest(request, .get, parent))
        guard parentAnswer.status == 200 else {
            return await envelope(parentAnswer, request, session: nil, next: next)
        }
        let query = "(parentUrl eq '\(parent)' and bag eq '\(bag)')"
        let path = "/ff/resources/\(Self.grabBagCollection)/\(query)/item"
        let encoded = path.replacingOccurrences(of: " ", with: "%20").replacingOccurrences(
            of: "'", with: "%27")
        var members = Self.internalRequest(request, .get, encoded)
        members.target = encoded + (request.query.map { "?" + $0 } ?? "")
        members.query = request.query.map { Substring(String($0)) }
        return await envelope(await next.respond(to: members), request, session: nil, next: next)
    }

    /// A request to `path` on the caller's behalf (same headers and session).
    static func internalRequest(_ request: Request, _ method: HTTPMethod, _ path: String) -> Request {
        var copy = request
        copy.method = method
        copy.target = path
        copy.path = Substring(path)
        copy.query = nil
        copy.body = []
        copy.headers.remove("If-None-Match")
        copy.headers.set("Content-Type", "application/json")
        copy.isMadeByServer = true
        return copy
    }

    /// Whether a 404 says the object has no blob of that name (so the member may be a grab bag).
    static func isMissingBlob(_ response: Response, member: String) -> Bool {
        guard response.status == 404, case .object(let body)? = try? JSONParser.parse(response.body) else {
            return false
        }
        return body["details"]?.objectValue?["member"]?.stringValue == member
    }
}
