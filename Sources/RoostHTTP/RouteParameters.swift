/// A route's path parameters, decoded: `:guid` in `/ff/resources/:collection/:guid`.
public struct RouteParameters: Sendable, Equatable, ExpressibleByDictionaryLiteral {
    private var values: [String: String]

    public init(dictionaryLiteral elements: (String, String)...) {
        values = Dictionary(elements, uniquingKeysWith: { $1 })
    }

    /// The parameter's value; nil when the route has none by this name.
    public subscript(name: String) -> String? {
        get { values[name] }
        set { values[name] = newValue }
    }

    /// The parameter's value, which the route's pattern promises; a handler registered under a
    /// pattern without it gets a 400 (`RoutingError.missingParameter`) instead of a crash.
    public func require(_ name: String) throws(RoutingError) -> String {
        guard let value = values[name] else { throw .missingParameter(name) }
        return value
    }

    /// Decodes the parameters of a matched path; nil when a segment's percent-encoding is broken.
    init?(_ segments: [RouteTrie.Segment], _ path: [Substring], in whole: Substring) {
        values = [:]
        for (position, segment) in segments.enumerated() {
            switch segment {
            case .rest(let name):
                // The raw remainder, so that '//' inside it survives.
                guard let decoded = PercentEncoding.decode(whole[path[position].startIndex...]) else {
                    return nil
                }
                values[name] = decoded
                return
            case .literal:
                continue
            case .parameter(let name):
                guard let decoded = PercentEncoding.decode(path[position]) else { return nil }
                values[name] = decoded
            }
        }
    }
}
