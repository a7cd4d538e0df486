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
public struct JSONObject: Sendable, Equatable {
    /// The members in order; keys are unique.
    public private(set) var members: [(key: String, value: JSONValue)]

    /// Makes an empty object.
    public init() { members = [] }

    /// Makes an object from members whose keys are already unique.
    public init(uniqueMembers: [(key: String, value: JSONValue)]) { members = uniqueMembers }

    /// The member for `key`; setting `nil` removes it, setting a new key appends it.
    public subscript(key: String) -> JSONValue? {
        get { members.first(where: { $0.key == key })?.value }
        set {
            let index = members.firstIndex(where: { $0.key == key })
            switch (index, newValue) {
            case (let i?, let value?): members[i].value = value
            case (let i?, nil): members.remove(at: i)
            case (nil, let value?): members.append((key, value))
            case (nil, nil): break
            }
        }
    }

    /// The keys in order.
    public var keys: [String] { members.map(\.key) }

    /// Whether the object has no members.
    public var isEmpty: Bool { members.isEmpty }

    public static func == (lhs: JSONObject, rhs: JSONObject) -> Bool {
        lhs.members.count == rhs.members.count
            && zip(lhs.members, rhs.members).allSatisfy { $0.key == $1.key && $0.value == $1.value }
    }
}
