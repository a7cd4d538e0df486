/// The routes as a tree of path segments, so that a request is matched in one walk of its path:
/// per segment a dictionary lookup for literals, then one parameter child, then one trailing
/// wildcard child, tried in that order (literals win over parameters, parameters over a
/// wildcard), backing up only when a branch ends without a route.
struct RouteTrie: Sendable {
    enum Segment: Sendable, Equatable {
        case literal(String)
        case parameter(String)
        case rest(String)
    }

    final class Node: @unchecked Sendable {
        // Mutated only while routes are added, before the router is shared.
        var literals: [Substring: Node] = [:]
        var parameter: Node?
        var rest: Node?
        /// The routes ending here, by method; the index of each route in registration order.
        var routes: [HTTPMethod: Int] = [:]
    }

    private(set) var root = Node()

    static func segments(of pattern: String) -> [Segment] {
        pattern.split(separator: "/").map { part -> Segment in
            if part.hasPrefix(":") { return .parameter(String(part.dropFirst())) }
            if part.hasPrefix("*") { return .rest(String(part.dropFirst())) }
            return .literal(String(part))
        }
    }

    /// Adds a route; returns the index of the route already there for this method and shape
    /// (a conflict: the new route would never be chosen), or nil.
    mutating func insert(_ segments: [Segment], method: HTTPMethod, index: Int) -> Int? {
        if !isKnownUniquelyReferenced(&root) { root = Self.copy(root) }
        var node = root
        for segment in segments {
            switch segment {
            case .literal(let text):
                let key = Substring(text)
                let next = node.literals[key] ?? Node()
                node.literals[key] = next
                node = next
            case .parameter:
                let next = node.parameter ?? Node()
                node.parameter = next
                node = next
            case .rest:
                let next = node.rest ?? Node()
                node.rest = next
                node = next
            }
        }
        if let existing = node.routes[method] { return existing }
        node.routes[method] = index
        return nil
    }

    /// A router copied before all routes are added keeps its own tree.
    private static func copy(_ node: Node) -> Node {
        let copy = Node()
        copy.literals = node.literals.mapValues(Self.copy)
        copy.parameter = node.parameter.map(Self.copy)
        copy.rest = node.rest.map(Self.copy)
        copy.routes = node.routes
        return copy
    }

    /// The first node, in precedence order, whose routes pass `accept`; with `visit`, every
    /// node the path reaches is offered to it (for a 405's `Allow`).
    func first(_ path: [Substring], where accept: (Node) -> Bool) -> Node? {
        Self.walk(root, path, 0, accept)
    }

    private static func walk(_ node: Node, _ path: [Substring], _ position: Int, _ accept: (Node) -> Bool)
        -> Node?
    {
        if position == path.count { return accept(node) ? node : nil }
        if let literal = node.literals[path[position]], let found = walk(literal, path, position + 1, accept)
        {
            return found
        }
        if let parameter = node.parameter, let found = walk(parameter, path, position + 1, accept) {
            return found
        }
        // A wildcard takes the rest of the path: one segment or more.
        if let rest = node.rest, accept(rest) { return rest }
        return nil
    }
}
