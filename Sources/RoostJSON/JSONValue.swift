/// A JSON document held exactly as it was written.
///
/// Numbers keep their literal text, so integers beyond 2^53 and long decimals round-trip unchanged,
/// and objects keep their key order, so a stored object reads back as it was sent.
public enum JSONValue: Sendable, Equatable {
    case null
    case bool(Bool)
    /// The number's literal text, already validated against the JSON grammar.
    case number(String)
    case string(String)
    case array([JSONValue])
    case object(JSONObject)

    /// Makes a number from an integer.
    public static func integer(_ value: Int64) -> JSONValue { .number(String(value)) }

    /// The members when this is an object.
    public var objectValue: JSONObject? {
        if case .object(let object) = self { return object }
        return nil
    }

    /// The text when this is a string.
    public var stringValue: String? {
        if case .string(let text) = self { return text }
        return nil
    }

    /// The value as an integer when it is a number without fraction or exponent.
    public var integerValue: Int64? {
        if case .number(let literal) = self { return Int64(literal) }
        return nil
    }

    /// A short name of the JSON type, for error messages.
    public var typeName: String {
        switch self {
        case .null: "null"
        case .bool: "boolean"
        case .number: "number"
        case .string: "string"
        case .array: "array"
        case .object: "object"
        }
    }
}

/// A JSON object's members in their original order, with lookup by key.
///
/// Small objects (the common case) look keys up by scanning, which beats hashing for a handful of
/// short keys; above ``indexThreshold`` members a dictionary from key to position makes lookups,
/// replacements and appends O(1), so building or merging a large object stays linear. Keys compare
/// as Swift strings (canonical equivalence), the same equality the parser uses to refuse duplicates.
public struct JSONObject: Sendable, Equatable {
    /// The members in order; keys are unique.
    public private(set) var members: [(key: String, value: JSONValue)]
    /// Position of each key in `members`; present only above `indexThreshold` members.
    private var positions: [String: Int]?

    /// Objects with more members than this get a key index.
    public static let indexThreshold = 16

    /// Makes an empty object.
    public init() { members = [] }

    /// Makes an object from members whose keys are already unique.
    public init(uniqueMembers: [(key: String, value: JSONValue)]) {
        members = uniqueMembers
        if members.count > Self.indexThreshold { positions = Self.index(of: members) }
    }

    /// Members and the index the parser built while checking for duplicates.
    init(uniqueMembers: [(key: String, value: JSONValue)], positions: [String: Int]?) {
        members = uniqueMembers
        self.positions = positions
        if positions == nil, members.count > Self.indexThreshold { self.positions = Self.index(of: members) }
    }

    static func index(of members: [(key: String, value: JSONValue)]) -> [String: Int] {
        var positions: [String: Int] = [:]
        positions.reserveCapacity(members.count)
        for (position, member) in members.enumerated() { positions[member.key] = position }
        return positions
    }

    /// Where `key` is in `members`.
    func position(of key: String) -> Int? {
        if let positions { return positions[key] }
        return members.firstIndex(where: { $0.key == key })
    }

    /// The member for `key`; setting `nil` removes it (O(n)), setting a new key appends it.
    public subscript(key: String) -> JSONValue? {
        get { position(of: key).map { members[$0].value } }
        set {
            switch (position(of: key), newValue) {
            case (let i?, let value?): members[i].value = value
            case (let i?, nil):
                members.remove(at: i)
                if positions != nil { positions = Self.index(of: members) }
            case (nil, let value?):
                members.append((key, value))
                if positions != nil {
                    positions?[key] = members.count - 1
                } else if members.count > Self.indexThreshold {
                    positions = Self.index(of: members)
                }
            case (nil, nil): break
            }
        }
    }

    /// Removes every member `shouldRemove` accepts, keeping the others in order; O(n).
    public mutating func removeAll(where shouldRemove: (String, JSONValue) throws -> Bool) rethrows {
        let before = members.count
        try members.removeAll { try shouldRemove($0.key, $0.value) }
        if members.count != before, positions != nil {
            positions = members.count > Self.indexThreshold ? Self.index(of: members) : nil
        }
    }

    /// The keys in order.
    public var keys: [String] { members.map(\.key) }

    /// How many members the object has.
    public var count: Int { members.count }

    /// Whether the object has no members.
    public var isEmpty: Bool { members.isEmpty }

    public static func == (lhs: JSONObject, rhs: JSONObject) -> Bool {
        lhs.members.count == rhs.members.count
            && zip(lhs.members, rhs.members).allSatisfy { $0.key == $1.key && $0.value == $1.value }
    }
}
