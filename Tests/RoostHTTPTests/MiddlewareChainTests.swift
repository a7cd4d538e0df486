import RoostHTTP
import Testing

@Suite struct MiddlewareChainTests {
    /// Appends its name to a header on the way in and on the way out.
    struct Tracing: HTTPMiddleware {
        let name: String

        func respond(to request: Request, next: MiddlewareChain.Next) async -> Response {
            var request = request
            request.headers.add("X-Trace", "in:\(name)")
            var response = await next.respond(to: request)
            response.headers.add("X-Trace", "out:\(name)")
            return response
        }
    }

    /// Answers `/short` itself; anything else twice through the rest of the chain.
    struct Deciding: HTTPMiddleware {
        func respond(to request: Request, next: MiddlewareChain.Next) async -> Response {
            if request.path == "/short" { return Response(status: 418) }
            let first = await next.respond(to: request)
            var second = await next.respond(to: request)
            second.headers.add("X-First", String(first.status))
            return second
        }

        func admit(_ request: Request, next: MiddlewareChain.Next) async -> Response? {
            request.path == "/refuse" ? Response(status: 413) : await next.admit(request)
        }
    }

    struct Echo: Responder {
        func respond(to request: Request) async -> Response {
            var response = Response(status: 200)
            for value in request.headers.values(for: "X-Trace") { response.headers.add("X-Seen", value) }
            return response
        }

        func admit(_ request: Request) async -> Response? {
            request.path == "/inner-refuse" ? Response(status: 507) : nil
        }
    }

    func request(_ path: String) -> Request {
        Request(method: .get, target: path, headers: HTTPHeaders(), body: [], remoteAddress: "192.0.2.1")
    }

    @Test func theFirstMiddlewareIsOutermost() async {
        let chain = MiddlewareChain([Tracing(name: "a"), Tracing(name: "b")], around: Echo())
        let response = await chain.respond(to: request("/x"))
        #expect(response.status == 200)
        #expect(response.headers.values(for: "X-Seen") == ["in:a", "in:b"])
        #expect(response.headers.values(for: "X-Trace") == ["out:b", "out:a"])
    }

    @Test func aMiddlewareMayAnswerItselfOrCallTheRestTwice() async {
        let chain = MiddlewareChain([Tracing(name: "a"), Deciding(), Tracing(name: "c")], around: Echo())
        let short = await chain.respond(to: request("/short"))
        #expect(short.status == 418)
        #expect(short.headers.values(for: "X-Trace") == ["out:a"])
        let twice = await chain.respond(to: request("/x"))
        #expect(twice.headers["X-First"] == "200")
        #expect(twice.headers.values(for: "X-Seen") == ["in:a", "in:c"])
        #expect(twice.headers.values(for: "X-Trace") == ["out:c", "out:a"])
    }

    @Test func admissionPassesThroughUnlessAMiddlewareRefuses() async {
        let chain = MiddlewareChain([Tracing(name: "a"), Deciding()], around: Echo())
        #expect(await chain.admit(request("/x")) == nil)
        #expect(await chain.admit(request("/refuse"))?.status == 413)
        #expect(await chain.admit(request("/inner-refuse"))?.status == 507)
        #expect(await MiddlewareChain([], around: Echo()).respond(to: request("/x")).status == 200)
    }
}
