/// A request handler.
public typealias Handler = @Sendable (Request) async throws -> Response
/// A check of a streamed request when its head arrives: throwing refuses it before its body.
public typealias Admission = @Sendable (Request) async throws -> Void

/// Maps method and path to handlers, with `:name` segments and a trailing `*name` that takes the rest.
///
/// Literal segments win over parameters, and parameters over a trailing wildcard. A path that
/// matches only under other methods answers 405 with `Allow`. `HEAD` falls back to `GET`.
public struct Router: Responder {
    private enum Segment: Sendable, Equatable {
        case literal(String)
        case parameter(String)
        case rest(String)
    }

    private struct Route: Sendable {
        let method: HTTPMethod
        let pattern: String
        let segments: [Segment]
        /// Whether the body goes to a ``RequestBodySink`` instead of memory.
        let streamsBody: Bool
        let admission: Admission?
        let handler: Handler
    }

    private var routes: [Route] = []
    /// Turns a thrown error into a response; this is the application's one error boundary.
    private let errorResponse: @Sendable (any Error, Request) -> Response

    /// Makes a router whose errors, and 404/405 answers, go through `errorResponse`.
    public init(errorResponse: @escaping @Sendable (any Error, Request) -> Response) {
        self.errorResponse = errorResponse
    }

    /// Adds a route. The pattern is a path such as `/ff/resources/:collection/:guid`; with
    /// `streamingBody`, request bodies stream to the server's body sink (see ``streamsBody(_:)``).
    /// `admit`, for a streamed route, runs when the head arrives (see ``Responder/admit(_:)``).
    public mutating func on(
        _ method: HTTPMethod, _ pattern: String, streamingBody: Bool = false, admit: Admission? = nil,
        _ handler: @escaping Handler
    ) {
        let segments = pattern.split(separator: "/").map { part -> Segment in
            if part.hasPrefix(":") { return .parameter(String(part.dropFirst())) }
            if part.hasPrefix("*") { return .rest(String(part.dropFirst())) }
            return .literal(String(part))
        }
        routes.append(
            Route(
                method: method, pattern: pattern, segments: segments, streamsBody: streamingBody,
                admission: admit, handler: handler))
    }

    /// Whether the route a request head goes to streams its body; asked once the head has arrived.
    public func streamsBody(_ head: RequestHead) -> Bool {
        let target = head.target.split(separator: "?", maxSplits: 1).first ?? ""
        let path = target.split(separator: "/", omittingEmptySubsequences: true)
        return match(HTTPMethod(rawValue: head.method), path).forMethod?.route.streamsBody ?? false
    }

    public func admit(_ request: Request) async -> Response? {
        var request = request
        let path = request.path.split(separator: "/", omittingEmptySubsequences: true)
        let matched = match(request.method, path)
        // A large body to a path no route serves is answered 404 from its head, not read first.
        guard matched.any != nil else {
            return errorResponse(RoutingError.notFound(path: String(request.path)), request)
        }
        guard let chosen = matched.forMethod?.route, let admission = chosen.admission else { return nil }
        guard let parameters = Self.parameters(chosen.segments, path, in: request.path) else {
            return errorResponse(RoutingError.notFound(path: String(request.path)), request)
        }
        request.parameters = parameters
        request.route = chosen.pattern
        do {
            try await admission(request)
            return nil
        } catch {
            var response = errorResponse(error, request)
            response.route = chosen.pattern
            return response
        }
    }

    /// The best route for the path under any method, under this method, and under GET.
    private func match(_ method: HTTPMethod, _ path: [Substring]) -> (
        any: (route: Route, score: Int)?, forMethod: (route: Route, score: Int)?,
        get: (route: Route, score: Int)?
    ) {
        var best: (route: Route, score: Int)?
        var bestForMethod: (route: Route, score: Int)?
        var bestGet: (route: Route, score: Int)?
        for route in routes {
            guard let score = Self.score(route.segments, path) else { continue }
            if best == nil || score > best!.score { best = (route, score) }
            if route.method == method, bestForMethod == nil || score > bestForMethod!.score {
                bestForMethod = (route, score)
            }
            if route.method == .get, bestGet == nil || score > bestGet!.score { bestGet = (route, score) }
        }
        return (best, bestForMethod, bestGet)
    }

    public func respond(to request: Request) async -> Response {
        var request = request
        let path = request.path.split(separator: "/", omittingEmptySubsequences: true)
        // Match on raw segments first; only the chosen route's parameters get decoded.
        let (best, bestForMethod, bestGet) = match(request.method, path)
        guard let best else {
            return errorResponse(RoutingError.notFound(path: String(request.path)), request)
        }
        guard let chosen = bestForMethod ?? (request.method == .head ? bestGet : nil) else {
            // Only a 405 needs the methods the path allows; matched requests skip this.
            var allowed = Set(routes.filter { Self.score($0.segments, path) != nil }.map(\.method.rawValue))
            if allowed.contains("GET") { allowed.insert("HEAD") }
            var response = errorResponse(RoutingError.methodNotAllowed(allowed: allowed.sorted()), request)
            response.headers.set("Allow", allowed.sorted().joined(separator: ", "))
            response.route = best.route.pattern
            return response
        }
        guard let parameters = Self.parameters(chosen.route.segments, path, in: request.path) else {
            var response = errorResponse(RoutingError.notFound(path: String(request.path)), request)
            response.route = chosen.route.pattern
            return response
        }
        request.parameters = parameters
        request.route = chosen.route.pattern
        var response: Response
        do {
            response = try await chosen.route.handler(request)
        } catch {
            response = errorResponse(error, request)
        }
        response.route = chosen.route.pattern
        return response
    }

    /// A precedence score when the path fits: literals beat parameters, earlier segments weigh more.
    private static func score(_ segments: [Segment], _ path: [Substring]) -> Int? {
        var score = 0
        for (position, segment) in segments.enumerated() {
            let weight = 2 * (16 - min(position, 16))
            switch segment {
            case .rest:
                return position < path.count ? score : nil
            case .literal(let text):
                guard position < path.count, path[position] == text else { return nil }
                score += 3 << weight
            case .parameter:
                guard position < path.count else { return nil }
                score += 2 << weight
            }
        }
        return segments.count == path.count ? score : nil
    }

    /// The decoded parameters; nil when a segment's percent-encoding is broken.
    private static func parameters(_ segments: [Segment], _ path: [Substring], in whole: Substring)
        -> [String: String]?
    {
        var parameters: [String: String] = [:]
        for (position, segment) in segments.enumerated() {
            switch segment {
            case .rest(let name):
                // The raw remainder, so that '//' inside it survives.
                guard let decoded = PercentEncoding.decode(whole[path[position].startIndex...]) else {
                    return nil
                }
                parameters[name] = decoded
                return parameters
            case .literal:
                continue
            case .parameter(let name):
                guard let decoded = PercentEncoding.decode(path[position]) else { return nil }
                parameters[name] = decoded
            }
        }
        return parameters
    }
}

/// Why the router found no handler.
public enum RoutingError: Error, Sendable, Equatable {
    case notFound(path: String)
    case methodNotAllowed(allowed: [String])
}
