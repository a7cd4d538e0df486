import RoostQuery

/// A query followed by a member to traverse: `(query)/member` in an object URL.
public enum QueryTraversal {
    /// The query and the member, when the query's outer parenthesis closes just before a final
    /// `/identifier`; nil for a plain query.
    public static func split(_ text: String) -> (query: String, member: String)? {
        guard let slash = text.lastIndex(of: "/") else { return nil }
        let member = String(text[text.index(after: slash)...])
        let query = String(text[..<slash])
        guard FieldPath.isIdentifier(member), query.hasSuffix(")") else { return nil }
        // Only a split at depth 0 outside strings counts: walk the query and check it closes last.
        var depth = 0
        var inString = false
        for (offset, character) in query.enumerated() {
            if character == "'" { inString.toggle() }
            if inString { continue }
            if character == "(" { depth += 1 }
            if character == ")" {
                depth -= 1
                if depth == 0 && offset != query.count - 1 { return nil }
            }
        }
        return depth == 0 && !inString ? (query, member) : nil
    }
}
