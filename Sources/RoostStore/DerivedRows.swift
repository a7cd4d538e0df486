import RoostJSON

/// The rows a write of one object keeps in step beside it: the `group_members` of a group and the
/// `blob_refs` of its blob members. They are computed from the document before the write, so the
/// writer's closure only runs SQL. Shared by every driver; each writes the rows in its own SQL.
public struct DerivedRows: Sendable {
    /// Users a group object lists; nil for objects that are not groups.
    public var groupMembers: [String]?
    /// Members whose value is a blob descriptor, with the blob's digest.
    public var blobReferences: [(member: String, sha256: String)]

    /// No group members and no blob references: an object that is neither.
    public init() {
        groupMembers = nil
        blobReferences = []
    }

    public init(of object: StoredObject) {
        let isGroup = object.collection == SQLiteObjectStore.groupCollection
        let mayHoldBlobs = SQLiteObjectStore.mayHoldBlobs(object.document)
        groupMembers = isGroup ? [] : nil
        blobReferences = []
        guard isGroup || mayHoldBlobs, case .object(let document)? = try? JSONParser.parse(object.document)
        else { return }
        if isGroup { groupMembers = Self.users(document["users"]) }
        if mayHoldBlobs { blobReferences = Self.blobs(document) }
    }

    private static let userURLPrefix = Array("/ff/resources/ffuser/".utf8)

    /// The user guids of a group's `users`: each element that is a guid or a reference to an
    /// `FFUser`, read as `json_each` reads it (an object's values, a lone value as itself).
    static func users(_ value: JSONValue?) -> [String] {
        let elements: [JSONValue]
        switch value {
        case nil: elements = []
        case .array(let array)?: elements = array
        case .object(let object)?: elements = object.members.map(\.value)
        case let single?: elements = [single]
        }
        return elements.compactMap { element in
            switch element {
            case .string(let guid): return guid
            case .object(let reference):
                guard let url = reference["ffUrl"]?.stringValue else { return nil }
                // The path's case does not matter, as with SQL's LIKE.
                let bytes = Array(url.utf8)
                guard bytes.count >= userURLPrefix.count,
                    zip(bytes, userURLPrefix).allSatisfy({ lowercased($0) == $1 })
                else { return nil }
                return String(decoding: bytes[userURLPrefix.count...], as: UTF8.self)
            default: return nil
            }
        }
    }

    private static func lowercased(_ byte: UInt8) -> UInt8 {
        (65...90).contains(byte) ? byte + 32 : byte
    }

    /// Members whose value is `{"blob": {"sha256": …}, …}`.
    static func blobs(_ document: JSONObject) -> [(member: String, sha256: String)] {
        document.members.compactMap { member in
            guard let digest = member.value.objectValue?["blob"]?.objectValue?["sha256"], digest != .null
            else { return nil }
            return (member.key, digest.stringValue ?? JSONWriter.string(digest))
        }
    }

    /// Writes the rows of a new object, or replaces those of a changed one.
    func write(collection: String, guid: String, replacing: Bool, on connection: SQLiteConnection) throws {
        if let groupMembers {
            if replacing { try connection.run("DELETE FROM group_members WHERE group_guid = \(guid)") }
            for user in groupMembers {
                try connection.run(
                    "INSERT OR IGNORE INTO group_members (group_guid, user_guid) VALUES (\(guid), \(user))")
            }
        }
        if replacing {
            try connection.run("DELETE FROM blob_refs WHERE collection = \(collection) AND guid = \(guid)")
        }
        for reference in blobReferences {
            try connection.run(
                """
                INSERT OR REPLACE INTO blob_refs (collection, guid, member, sha256)
                VALUES (\(collection), \(guid), \(reference.member), \(reference.sha256))
                """)
        }
    }

    /// Removes the rows of a deleted object.
    static func remove(collection: String, guid: String, on connection: SQLiteConnection) throws {
        if collection == SQLiteObjectStore.groupCollection {
            try connection.run("DELETE FROM group_members WHERE group_guid = \(guid)")
        }
        try connection.run("DELETE FROM blob_refs WHERE collection = \(collection) AND guid = \(guid)")
    }
}
