/// Work that every request passes through at the server's edge, around the router: the same for
/// every path (request ids, CORS, a wire dialect), so it is not a route group's middleware.
///
/// A middleware calls `next` to pass the request on (any number of times: a dialect may make
/// internal requests), or answers itself without calling it.
public protocol HTTPMiddleware: Sendable {
    func respond(to request: Request, next: MiddlewareChain.Next) async -> Response
    /// The streamed-body admission (see ``Responder/admit(_:)``), passed through by default.
    func admit(_ request: Request, next: MiddlewareChain.Next) async -> Response?
}

extension HTTPMiddleware {
    public func admit(_ request: Request, next: MiddlewareChain.Next) async -> Response? {
        await next.admit(request)
    }
}

/// Middleware in front of a responder, the first one outermost; built once when the server is.
public struct MiddlewareChain: Responder {
    /// The rest of a chain, as a middleware sees it.
    public struct Next: Sendable {
        let links: Links
        let index: Int

        public func respond(to request: Request) async -> Response {
            guard index < links.middleware.count else { return await links.responder.respond(to: request) }
            return await links.middleware[index].respond(
                to: request, next: Next(links: links, index: index + 1))
        }

        public func admit(_ request: Request) async -> Response? {
            guard index < links.middleware.count else { return await links.responder.admit(request) }
            return await links.middleware[index].admit(request, next: Next(links: links, index: index + 1))
        }
    }

    // One allocation for the chain's life: a `Next` is a reference and an index.
    final class Links: Sendable {
        let middleware: [any HTTPMiddleware]
        let responder: any Responder

        init(middleware: [any HTTPMiddleware], responder: any Responder) {
            self.middleware = middleware
            self.responder = responder
        }
    }

    private let links: Links

    public init(_ middleware: [any HTTPMiddleware], around responder: any Responder) {
        links = Links(middleware: middleware, responder: responder)
    }

    public func respond(to request: Request) async -> Response {
        await Next(links: links, index: 0).respond(to: request)
    }

    public func admit(_ request: Request) async -> Response? {
        await Next(links: links, index: 0).admit(request)
    }
}
