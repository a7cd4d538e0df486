import RoostCore
import RoostHTTP
import Synchronization
import Testing

@testable import RoostServer

/// Route groups in process: the order middleware runs in, the context it fills, and that a
/// refusal from `prepare` comes at the head, before the handler or the body.
@Suite("Route middleware")
struct RouteMiddlewareTests {
    final class Trace: Sendable {
        let steps = Mutex<[String]>([])
        func add(_ step: String) { steps.withLock { $0.append(step) } }
        var all: [String] { steps.withLock { $0 } }
    }

    struct Recording: RouteMiddleware {
        let name: String
        let trace: Trace
        var refuses = false

        func prepare(_ request: Request, _ context: inout RequestContext) async throws {
            trace.add("prepare \(name)")
            if refuses { throw RoostError.loginRequired }
        }

        func respond(to request: Request, context: RequestContext, next: ContextHandler) async throws
            -> Response
        {
            trace.add("enter \(name)")
            defer { trace.add("leave \(name)") }
            return try await next(request, context)
        }
    }

    func router(_ middleware: [any RouteMiddleware], trace: Trace) -> Router {
        let table = RouteTable(
            Router { error, _ in ErrorBoundary.render((error as? RoostError) ?? .internalError) })
        RouteGroup(table: table, middleware: middleware).on(.post, "/things") { _, context in
            trace.add("handler")
            return Response(status: context.principal == nil ? 200 : 500)
        }
        return table.router
    }

    @Test("middleware prepares in order, then wraps the handler outside in")
    func order() async {
        let trace = Trace()
        let router = router(
            [Recording(name: "a", trace: trace), Recording(name: "b", trace: trace)], trace: trace)
        let request = Request(method: .post, target: "/things")
        #expect(await router.admit(request) == nil)
        #expect(await router.respond(to: request).status == 200)
        #expect(
            trace.all == [
                "prepare a", "prepare b",  // at the head
                "prepare a", "prepare b", "enter a", "enter b", "handler", "leave b", "leave a",
            ])
    }

    @Test("a refusal in prepare answers at the head with the error's own headers; no handler runs")
    func refusal() async {
        let trace = Trace()
        let router = router(
            [Recording(name: "a", trace: trace), Recording(name: "b", trace: trace, refuses: true)],
            trace: trace)
        let request = Request(method: .post, target: "/things")
        let refused = await router.admit(request)
        #expect(refused?.status == 401)
        #expect(refused?.headers["WWW-Authenticate"] == #"Bearer realm="roost""#)
        #expect(await router.respond(to: request).status == 401)
        #expect(!trace.all.contains("handler"))
        #expect(!trace.all.contains("enter a"))
    }

    @Test("login required refuses an anonymous caller; the context names the user otherwise")
    func loginRequired() async throws {
        var context = RequestContext()
        await #expect(throws: RoostError.loginRequired) {
            try await LoginRequired().prepare(Request(method: .get, target: "/"), &context)
        }
        #expect(throws: RoostError.loginRequired) { try context.user() }
    }
}
