/// A request handler.
public typealias Handler = @Sendable (Request) async throws -> Response
/// A check of a streamed request when its head arrives: throwing refuses it before its body.
public typealias Admission = @Sendable (Request) async throws -> Void

/// Maps method and path to handlers, with `:name` segments and a trailing `*name` that takes the rest.
///
/// Literal segments win over parameters, and parameters over a trailing wildcard. A path that
/// matches only under other methods answers 405 with `Allow`. `HEAD` falls back to `GET`.
///
/// A request is routed once: ``route(_:)`` when its head arrives (the match travels in the
/// head, then the request, and decides whether its body streams), or else when it is answered.
public struct Router: Responder {
    /// What a route declares besides its handler.
    public struct Route: Sendable {
        public let method: HTTPMethod
        public let pattern: String
        /// Whether the body goes to a ``RequestBodySink`` instead of memory.
        public let streamsBody: Bool
        let segments: [RouteTrie.Segment]
        let admission: Admission?
        let handler: Handler
    }

    private var routes: [Route] = []
    /// Every route, in the order added: what an API description is generated from.
    public var declaredRoutes: [Route] { routes }
    private var trie = RouteTrie()
    /// Routes added for a method and shape already taken: each would never be chosen.
    public private(set) var conflicts: [String] = []
    /// Tells this router's matches from another's.
    private let identity = RouterIdentity()
    /// Turns a thrown error into a response; this is the application's one error boundary.
    private let errorResponse: @Sendable (any Error, Request) -> Response

    /// Makes a router whose errors, and 404/405 answers, go through `errorResponse`.
    public init(errorResponse: @escaping @Sendable (any Error, Request) -> Response) {
        self.errorResponse = errorResponse
    }

    /// Adds a route. The pattern is a path such as `/ff/resources/:collection/:guid`; with
    /// `streamingBody`, request bodies stream to the server's body sink.
    /// `admit`, for a streamed route, runs when the head arrives (see ``Responder/admit(_:)``).
    public mutating func on(
        _ method: HTTPMethod, _ pattern: String, streamingBody: Bool = false, admit: Admission? = nil,
        _ handler: @escaping Handler
    ) {
        let segments = RouteTrie.segments(of: pattern)
        if let taken = trie.insert(segments, method: method, index: routes.count) {
            // The application checks the list when it starts, in debug builds.
            conflicts.append(
                "\(method) \(pattern) is shadowed by \(routes[taken].method) \(routes[taken].pattern)")
            return
        }
        routes.append(
            Route(
                method: method, pattern: pattern, streamsBody: streamingBody, segments: segments,
                admission: admit, handler: handler))
    }

    /// Routes a request head: the match to keep in ``RequestHead/route`` (nil when no route
    /// serves it under its method).
    public func route(_ head: RequestHead) -> RouteMatch? {
        let target = head.target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        let path = target.first ?? ""
        guard case .matched(let match) = resolve(HTTPMethod(rawValue: head.method), path) else { return nil }
        return match
    }

    /// The outcome of routing a method and path.
    enum Resolution {
        case matched(RouteMatch)
        case notFound
        /// The path is served under other methods (the route that would have answered, for logs).
        case methodNotAllowed(allowed: [String], route: String)
        /// A segment's percent-encoding is broken.
        case undecodable(route: String)
    }

    func resolve(_ method: HTTPMethod, _ whole: Substring) -> Resolution {
        let path = whole.split(separator: "/", omittingEmptySubsequences: true)
        let node =
            trie.first(path) { $0.routes[method] != nil }
            ?? (method == .head ? trie.first(path) { $0.routes[.get] != nil } : nil)
        guard let node else {
            guard let any = trie.first(path, where: { !$0.routes.isEmpty }) else { return .notFound }
            return .methodNotAllowed(
                allowed: allowedMethods(path), route: routes[any.routes.values.min()!].pattern)
        }
        let route = routes[node.routes[method] ?? node.routes[.get]!]
        guard let parameters = RouteParameters(route.segments, path, in: whole) else {
            return .undecodable(route: route.pattern)
        }
        return .matched(
            RouteMatch(route: route, parameters: parameters, method: method, path: whole, router: identity))
    }

    /// Every method some route serves this path under; only a 405 asks.
    private func allowedMethods(_ path: [Substring]) -> [String] {
        var allowed: Set<String> = []
        _ = trie.first(path) { node in
            allowed.formUnion(node.routes.keys.map(\.rawValue))
            return false
        }
        if allowed.contains("GET") { allowed.insert("HEAD") }
        return allowed.sorted()
    }

    /// The match the request's head was given, when it is this router's for this request;
    /// else the request is routed now.
    private func resolution(of request: Request) -> Resolution {
        if let match = request.routeMatch, match.router === identity, match.method == request.method,
            match.path == request.path
        {
            return .matched(match)
        }
        return resolve(request.method, request.path)
    }

    public func admit(_ request: Request) async -> Response? {
        var request = request
        let match: RouteMatch
        switch resolution(of: request) {
        case .matched(let matched): match = matched
        case .methodNotAllowed: return nil  // answered in full by respond(to:)
        case .notFound, .undecodable:
            // A large body to a path no route serves is answered 404 from its head, not read first.
            return errorResponse(RoutingError.notFound(path: String(request.path)), request)
        }
        guard let admission = match.route.admission else { return nil }
        request.apply(match)
        do {
            try await admission(request)
            return nil
        } catch {
            var response = errorResponse(error, request)
            response.route = match.route.pattern
            return response
        }
    }

    public func respond(to request: Request) async -> Response {
        var request = request
        let match: RouteMatch
        switch resolution(of: request) {
        case .matched(let matched):
            match = matched
        case .notFound:
            return errorResponse(RoutingError.notFound(path: String(request.path)), request)
        case .methodNotAllowed(let allowed, let route):
            var response = errorResponse(RoutingError.methodNotAllowed(allowed: allowed), request)
            response.headers.set("Allow", allowed.joined(separator: ", "))
            response.route = route
            return response
        case .undecodable(let route):
            var response = errorResponse(RoutingError.notFound(path: String(request.path)), request)
            response.route = route
            return response
        }
        request.apply(match)
        var response: Response
        do {
            response = try await match.route.handler(request)
        } catch {
            response = errorResponse(error, request)
        }
        response.route = match.route.pattern
        return response
    }
}

final class RouterIdentity: Sendable {}

/// The route a request goes to, with its decoded path parameters: found once, when the head
/// arrives, and carried by the head and the request so that nothing routes it again.
public struct RouteMatch: Sendable, Equatable {
    public let route: Router.Route
    public let parameters: RouteParameters
    /// The method and path it was matched for; a request changed since is routed again.
    let method: HTTPMethod
    let path: Substring
    let router: RouterIdentity

    public static func == (left: RouteMatch, right: RouteMatch) -> Bool {
        left.router === right.router && left.route.pattern == right.route.pattern
            && left.method == right.method && left.path == right.path && left.parameters == right.parameters
    }
}

extension Request {
    fileprivate mutating func apply(_ match: RouteMatch) {
        routeMatch = match
        parameters = match.parameters
        route = match.route.pattern
    }
}

/// Why the router found no handler, or a handler found no parameter its route should have.
public enum RoutingError: Error, Sendable, Equatable {
    case notFound(path: String)
    case methodNotAllowed(allowed: [String])
    /// A handler asked for a parameter its route has not: a 400 rather than a crash.
    case missingParameter(String)
}
