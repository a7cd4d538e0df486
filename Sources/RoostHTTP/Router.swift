/// A request handler.
public typealias Handler = @Sendable (Request) async throws -> Response

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
        let handler: Handler
    }

    private var routes: [Route] = []
    /// Turns a thrown error into a response; this is the application's one error boundary.
    private let errorResponse: @Sendable (any Error, Request) -> Response

    /// Makes a router whose errors, and 404/405 answers, go through `errorResponse`.
    public init(errorResponse: @escaping @Sendable (any Error, Request) -> Response) {
        self.errorResponse = errorResponse
    }

    /// Adds a route. The pattern is a path such as `/ff/resources/:collection/:guid`.
    public mutating func on(_ method: HTTPMethod, _ pattern: String, _ handler: @escaping Handler) {
        let segments = pattern.split(separator: "/").map { part -> Segment in
            if part.hasPrefix(":") { return .parameter(String(part.dropFirst())) }
            if part.hasPrefix("*") { return .rest(String(part.dropFirst())) }
            return .literal(String(part))
        }
        routes.append(Route(method: method, pattern: pattern, segments: segments, handler: handler))
    }

    public func respond(to request: Request) async -> Response {
        var request = request
        let rawSegments = request.path.split(separator: "/", omittingEmptySubsequences: true)
        var candidates: [(route: Route, parameters: [String: String], score: Int)] = []
        for route in routes {
            if let (parameters, score) = match(route.segments, rawSegments) {
                candidates.append((route, parameters, score))
            }
        }
        guard !candidates.isEmpty else {
            return errorResponse(RoutingError.notFound(path: String(request.path)), request)
        }
        let method = request.method
        let chosen =
            best(candidates.filter { $0.route.method == method })
            ?? (method == .head ? best(candidates.filter { $0.route.method == .get }) : nil)
        guard let chosen else {
            var allowed = Set(candidates.map(\.route.method.rawValue))
            if allowed.contains("GET") { allowed.insert("HEAD") }
            var response = errorResponse(RoutingError.methodNotAllowed(allowed: allowed.sorted()), request)
            response.headers.set("Allow", allowed.sorted().joined(separator: ", "))
            response.route = best(candidates)?.route.pattern
            return response
        }
        request.parameters = chosen.parameters
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

    private func best(_ candidates: [(route: Route, parameters: [String: String], score: Int)]) -> (
        route: Route, parameters: [String: String], score: Int
    )? {
        candidates.max(by: { $0.score < $1.score })
    }

    /// Parameters and a precedence score, or nil when the path does not fit.
    private func match(_ segments: [Segment], _ path: [Substring]) -> ([String: String], Int)? {
        var parameters: [String: String] = [:]
        var score = 0
        for (position, segment) in segments.enumerated() {
            switch segment {
            case .rest(let name):
                guard position < path.count else { return nil }
                let rest = path[position...].joined(separator: "/")
                guard let decoded = PercentEncoding.decode(rest) else { return nil }
                parameters[name] = decoded
                return (parameters, score)
            case .literal(let text):
                guard position < path.count, path[position] == text else { return nil }
                score += 3 << (2 * (16 - min(position, 16)))
            case .parameter(let name):
                guard position < path.count, let decoded = PercentEncoding.decode(path[position]) else { return nil }
                parameters[name] = decoded
                score += 2 << (2 * (16 - min(position, 16)))
            }
        }
        return segments.count == path.count ? (parameters, score) : nil
    }
}

/// Why the router found no handler.
public enum RoutingError: Error, Sendable, Equatable {
    case notFound(path: String)
    case methodNotAllowed(allowed: [String])
}
