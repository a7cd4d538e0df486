import Testing

@testable import RoostHTTP

/// The router answered in process: precedence, 405 and `Allow`, HEAD, decoding, conflicts, and
/// a match found from the head reused by the answer.
@Suite("Router")
struct RouterTests {
    static func makeRouter() -> Router {
        var router = Router { error, _ in
            switch error {
            case RoutingError.notFound: Response(status: 404)
            case RoutingError.methodNotAllowed: Response(status: 405)
            case RoutingError.missingParameter(let name): Response(status: 400, body: Array(name.utf8))
            default: Response(status: 500)
            }
        }
        func named(_ name: String) -> Handler {
            { request in
                let parameters = ["collection", "guid", "member", "query"].compactMap { key in
                    request.parameters[key].map { "\(key)=\($0)" }
                }
                return Response(status: 200, body: Array(([name] + parameters).joined(separator: " ").utf8))
            }
        }
        router.on(.get, "/ff/resources/:collection", named("list"))
        router.on(.get, "/ff/resources/:collection/:guid", named("read"))
        router.on(.put, "/ff/resources/:collection/:guid", named("replace"))
        router.on(.get, "/ff/resources/:collection/:guid/:member", named("member"))
        router.on(.put, "/ff/resources/:collection/:guid/ffACL", named("acl"))
        router.on(.put, "/ff/resources/:collection/:guid/:member", streamingBody: true, named("upload"))
        router.on(.get, "/ff/resources/:collection/*query", named("query"))
        router.on(.get, "/ff/resources/FFUser/me", named("me"))
        router.on(.get, "/needs/:id") { request in
            Response(status: 200, body: Array(try request.parameters.require("guid").utf8))
        }
        return router
    }

    let router = makeRouter()

    func answer(_ method: HTTPMethod, _ target: String) async -> (Int, String, String?) {
        let response = await router.respond(to: Request(method: method, target: target))
        return (response.status, String(decoding: response.body, as: UTF8.self), response.headers["Allow"])
    }

    @Test(
        "literals beat parameters, parameters beat a wildcard, backing up where a branch ends",
        arguments: [
            (HTTPMethod.get, "/ff/resources/Post", "list collection=Post"),
            (.get, "/ff/resources/Post/g1", "read collection=Post guid=g1"),
            (.get, "/ff/resources/FFUser/me", "me"),
            (.get, "/ff/resources/FFUser/ann", "read collection=FFUser guid=ann"),
            (.get, "/ff/resources/Post/g1/photo", "member collection=Post guid=g1 member=photo"),
            (.put, "/ff/resources/Post/g1/ffACL", "acl collection=Post guid=g1"),
            (.put, "/ff/resources/Post/g1/photo", "upload collection=Post guid=g1 member=photo"),
            (.get, "/ff/resources/Post/(a%20eq%201)/x/y", "query collection=Post query=(a eq 1)/x/y"),
            (.get, "/ff/resources/FFUser/me/x/y", "query collection=FFUser query=me/x/y"),
            (.head, "/ff/resources/Post/g1", "read collection=Post guid=g1"),
            (.get, "//ff//resources/Post/", "list collection=Post"),
        ])
    func precedence(method: HTTPMethod, target: String, expected: String) async {
        let (status, body, _) = await answer(method, target)
        #expect(status == 200)
        #expect(body == expected)
    }

    @Test("a path served under other methods is a 405 naming them all; an unknown one a 404")
    func notAllowedAndNotFound() async {
        let patch = await answer(.patch, "/ff/resources/Post/g1/photo")
        #expect(patch.0 == 405)
        #expect(patch.2 == "GET, HEAD, PUT")
        #expect(await answer(.delete, "/ff/resources/Post").2 == "GET, HEAD")
        #expect(await answer(.get, "/ff/other").0 == 404)
        #expect(await answer(.get, "/ff/resources").0 == 404)
        #expect(await answer(.get, "/ff/resources/Post/%zz").0 == 404)
    }

    @Test("a parameter the pattern lacks is a 400, not a crash")
    func missingParameter() async {
        let (status, body, _) = await answer(.get, "/needs/1")
        #expect(status == 400)
        #expect(body == "guid")
    }

    @Test("a second route for a method and shape is a conflict, listed and not added")
    func conflicts() async {
        #expect(router.conflicts.isEmpty)
        var router = router
        router.on(.get, "/ff/resources/:kind/:id") { _ in Response(status: 500) }
        router.on(.put, "/ff/resources/:kind/:id/:blob", streamingBody: true) { _ in Response(status: 500) }
        #expect(
            router.conflicts == [
                "GET /ff/resources/:kind/:id is shadowed by GET /ff/resources/:collection/:guid",
                "PUT /ff/resources/:kind/:id/:blob is shadowed by PUT /ff/resources/:collection/:guid/:member",
            ])
        #expect(await router.respond(to: Request(method: .get, target: "/ff/resources/P/g")).status == 200)
        // The copy's routes are its own.
        router.on(.delete, "/ff/resources/:collection/:guid") { _ in Response(status: 204) }
        #expect(await router.respond(to: Request(method: .delete, target: "/ff/resources/P/g")).status == 204)
        #expect(
            await self.router.respond(to: Request(method: .delete, target: "/ff/resources/P/g")).status == 405
        )
    }

    @Test("the match found from the head is the answer's; a request changed since is routed again")
    func headMatchIsReused() async throws {
        let head = RequestHead(
            method: "PUT", target: "/ff/resources/Post/g1/photo?x=1", minorVersion: 1, headers: [],
            keepAlive: true)
        let match = try #require(router.route(head))
        #expect(match.route.pattern == "/ff/resources/:collection/:guid/:member")
        #expect(match.route.streamsBody)
        #expect(match.parameters["member"] == "photo")

        var request = Request(method: .put, target: head.target)
        request.routeMatch = match
        let same = await router.respond(to: request)
        #expect(String(decoding: same.body, as: UTF8.self) == "upload collection=Post guid=g1 member=photo")
        #expect(same.route == "/ff/resources/:collection/:guid/:member")

        var moved = Request(method: .put, target: "/ff/resources/Post/g1/ffACL")
        moved.routeMatch = match
        let rerouted = await router.respond(to: moved)
        #expect(String(decoding: rerouted.body, as: UTF8.self) == "acl collection=Post guid=g1")
        // Another router's match is never taken for its own.
        var other = Request(method: .put, target: head.target)
        other.routeMatch = Self.makeRouter().route(head)
        #expect(await router.respond(to: other).status == 200)
    }
}
