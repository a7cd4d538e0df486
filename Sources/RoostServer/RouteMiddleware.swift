import RoostCore
import RoostHTTP
import RoostJSON
import RoostStore

/// What a request carries from its route's middleware to its handler: typed, per request,
/// instead of extra handler parameters or task-locals.
struct RequestContext: Sendable {
    /// The caller, once ``Authentication`` ran; nil when anonymous.
    var principal: Principal?
    /// The request's `Idempotency-Key`, to mark as run in the write's own transaction
    /// (set by ``IdempotentWrites``).
    var idempotency: IdempotencyMark?

    /// The logged-in caller; 401 `login_required` when there is none (behind ``LoginRequired``
    /// it is always there).
    func user() throws -> Principal {
        guard let principal else { throw RoostError.loginRequired }
        return principal
    }
}

/// A handler behind middleware.
typealias ContextHandler = @Sendable (Request, RequestContext) async throws -> Response

/// Work shared by the routes of a group, in the order the group lists it.
protocol RouteMiddleware: Sendable {
    /// Checks the request or fills its context; runs when a large or streamed body's head arrives
    /// (so a refusal costs no read), and again before the handler, whose request may differ.
    func prepare(_ request: Request, _ context: inout RequestContext) async throws
    /// Wraps what follows it: the next middleware, and last the handler.
    func respond(to request: Request, context: RequestContext, next: ContextHandler) async throws
        -> Response
}

extension RouteMiddleware {
    func prepare(_ request: Request, _ context: inout RequestContext) async throws {}
    func respond(to request: Request, context: RequestContext, next: ContextHandler) async throws
        -> Response
    {
        try await next(request, context)
    }
}

/// The caller, from a token in `Authorization: Bearer` or `X-Token`; a bad token is a 401 before
/// the body is read.
struct Authentication: RouteMiddleware {
    let authenticator: Authenticator

    func prepare(_ request: Request, _ context: inout RequestContext) async throws {
        context.principal = try await authenticator.principal(for: request)
    }
}

/// Collections Roost keeps for itself: FatFractal's grab bag memberships change and are read
/// only through their bags (`POST`/`GET parent/bag`), whose requests the dialect makes; a client
/// naming the collection gets 403 `collection_reserved`, administrators excepted.
struct ReservedCollections: RouteMiddleware {
    func prepare(_ request: Request, _ context: inout RequestContext) async throws {
        guard request.parameters["collection"] == AppDefinition.grabBagCollection, !request.isMadeByServer,
            context.principal?.isAdmin != true
        else { return }
        throw RoostError.collectionReserved
    }
}

/// Routes for logged-in users only: 401 `login_required` at the head, before the body.
struct LoginRequired: RouteMiddleware {
    func prepare(_ request: Request, _ context: inout RequestContext) async throws {
        _ = try context.user()
    }
}

/// Reserves what parsing a large body may build against the server's held bytes (see
/// ``ParsedBodyReservation``), for as long as the handler runs.
struct BodyReservation: RouteMiddleware {
    func respond(to request: Request, context: RequestContext, next: ContextHandler) async throws
        -> Response
    {
        let reserved = try ParsedBodyReservation.reserve(for: request)
        defer { reserved.map { request.heldBytes?.release($0) } }
        return try await next(request, context)
    }
}

extension IdempotentWrites: RouteMiddleware {
    func respond(to request: Request, context: RequestContext, next: ContextHandler) async throws
        -> Response
    {
        try await respond(to: request, principal: context.principal) { request, _, mark in
            var context = context
            context.idempotency = mark
            return try await next(request, context)
        }
    }
}

/// Routes that share middleware. Groups made from one ``RouteTable`` add to the same router.
struct RouteGroup {
    let table: RouteTable
    let middleware: [any RouteMiddleware]

    /// A group with this one's middleware, then `more`.
    func grouped(_ more: any RouteMiddleware...) -> RouteGroup {
        RouteGroup(table: table, middleware: middleware + more)
    }

    /// Adds a route. `admit`, for a body checked at its head, runs after the middleware's
    /// ``RouteMiddleware/prepare(_:_:)`` there.
    func on(
        _ method: HTTPMethod, _ pattern: String, streamingBody: Bool = false,
        admit: (@Sendable (Request, RequestContext) async throws -> Void)? = nil,
        _ handler: @escaping ContextHandler
    ) {
        let middleware = middleware
        // The chain is built once, here; a request walks it without allocating closures.
        let chain = middleware.reversed().reduce(handler) { next, layer in
            { request, context in try await layer.respond(to: request, context: context, next: next) }
        }
        let prepare: @Sendable (Request) async throws -> RequestContext = { request in
            var context = RequestContext()
            for layer in middleware { try await layer.prepare(request, &context) }
            return context
        }
        var admission: Admission? = nil
        if admit != nil || !middleware.isEmpty {
            admission = { request in
                let context = try await prepare(request)
                try await admit?(request, context)
            }
        }
        table.router.on(method, pattern, streamingBody: streamingBody, admit: admission) { request in
            try await chain(request, try await prepare(request))
        }
    }
}

/// The router being composed, shared by the groups that add to it; only composition touches it.
final class RouteTable {
    var router: Router

    init(_ router: Router) { self.router = router }
}
