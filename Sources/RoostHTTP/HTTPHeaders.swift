/// Header fields in arrival order, looked up without regard to case.
public struct HTTPHeaders: Sendable, Sequence {
    private var fields: [(name: String, value: String)]

    /// Makes a header list from name/value pairs.
    public init(_ fields: [(String, String)] = []) {
        self.fields = fields.map { (name: $0.0, value: $0.1) }
    }

    /// The first value for `name`, compared case-insensitively.
    public subscript(name: String) -> String? {
        fields.first(where: { $0.name.caseInsensitiveEquals(name) })?.value
    }

    /// Every value for `name`.
    public func values(for name: String) -> [String] {
        fields.filter { $0.name.caseInsensitiveEquals(name) }.map(\.value)
    }

    /// Appends a field, keeping any existing ones of the same name.
    public mutating func add(_ name: String, _ value: String) {
        fields.append((name, value))
    }

    /// Replaces every field of this name with one value.
    public mutating func set(_ name: String, _ value: String) {
        fields.removeAll(where: { $0.name.caseInsensitiveEquals(name) })
        fields.append((name, value))
    }

    /// Removes every field of this name.
    public mutating func remove(_ name: String) {
        fields.removeAll(where: { $0.name.caseInsensitiveEquals(name) })
    }

    /// Whether a field of this name is present.
    public func contains(_ name: String) -> Bool { self[name] != nil }

    /// The number of fields.
    public var count: Int { fields.count }

    public func makeIterator() -> IndexingIterator<[(name: String, value: String)]> {
        fields.makeIterator()
    }
}

extension String {
    /// ASCII case-insensitive equality, which is what HTTP field names need.
    func caseInsensitiveEquals(_ other: String) -> Bool {
        let lhs = utf8
        let rhs = other.utf8
        guard lhs.count == rhs.count else { return false }
        for (a, b) in zip(lhs, rhs) where a != b {
            let lowerA = (a >= 65 && a <= 90) ? a | 0x20 : a
            let lowerB = (b >= 65 && b <= 90) ? b | 0x20 : b
            if lowerA != lowerB { return false }
        }
        return true
    }
}
