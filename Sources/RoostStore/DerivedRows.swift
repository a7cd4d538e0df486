import RoostJSON

/// The rows a write of one object keeps in step beside it: the `group_members` of a group, the
/// `blob_refs` of its blob members and the `object_refs` of its references. They are computed from the document before the write, so the
/// writer's closure only runs SQL. Shared by every driver; each writes the rows in its own SQL.
public struct DerivedRows: Sendable {
    /// Users a group object lists; nil for objects that are not groups.
    public var groupMembers: [String]?
    /// Members whose value is a blob descriptor, with the blob's digest.
    public var blobReferences: [(member: String, sha256: String)]
    /// The references the document holds, so that no query parses an `ffUrl`.
    public var references: [ObjectReference]

    /// No group members, blob references or references: an object that has none.
    public init() {
        groupMembers = nil
        blobReferences = []
        references = []
    }

    /// Each derived row is an INSERT inside the write, in the single writer: a bounded number,
    /// so that one body of a few hundred KiB cannot hold the writer for tens of thousands.
    public enum Limit: Sendable, Equatable {
        /// Members whose value is a reference (`{"ffUrl": …}`), nested ones included.
        case references
        /// Users a group lists.
        case groupMembers
        /// Members whose value is a blob.
        case blobMembers

        public var maximum: Int {
            switch self {
            case .references: 1000
            case .groupMembers: 10_000
            case .blobMembers: 1000
            }
        }
    }

    /// The rows of `object`; `collections` (the domain's) says which objects are groups. Throws
    /// ``StoreError/Kind/tooManyDerivedRows(_:)`` when a ``Limit`` is passed.
    public init(of object: StoredObject, collections: AccountCollections) throws(StoreError) {
        let isGroup = object.collection == collections.groups
        let mayHoldBlobs = Self.mayHoldBlobs(object.document)
        let mayHoldReferences = ObjectReference.mayBeIn(object.document)
        groupMembers = isGroup ? [] : nil
        blobReferences = []
        references = []
        guard isGroup || mayHoldBlobs || mayHoldReferences,
            case .object(let document)? = try? JSONParser.parse(object.document)
        else { return }
        if isGroup {
            let prefix = Array(collections.userReferencePrefix.lowercased().utf8)
            let users = Self.users(document[collections.groupMembers], referencePrefix: prefix)
            guard users.count <= Limit.groupMembers.maximum else { throw .tooManyRows(.groupMembers) }
            groupMembers = users
        }
        if mayHoldBlobs {
            blobReferences = Self.blobs(document)
            guard blobReferences.count <= Limit.blobMembers.maximum else { throw .tooManyRows(.blobMembers) }
        }
        if mayHoldReferences {
            // Collecting stops one past the limit: a document far over it costs no more.
            references = ObjectReference.all(in: document, atMost: Limit.references.maximum + 1)
            guard references.count <= Limit.references.maximum else { throw .tooManyRows(.references) }
        }
    }

    /// The user guids of a group's members: each element that is a guid or a reference whose
    /// URL starts with `referencePrefix` (lowercased), read as `json_each` reads it (an object's
    /// values, a lone value as itself).
    static func users(_ value: JSONValue?, referencePrefix: [UInt8]) -> [String] {
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
                guard bytes.count >= referencePrefix.count,
                    zip(bytes, referencePrefix).allSatisfy({ lowercased($0) == $1 })
                else { return nil }
                return String(decoding: bytes[referencePrefix.count...], as: UTF8.self)
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

    private static let blobMarker = Array(#""blob":"#.utf8)

    /// Whether a document may hold a blob member; saves parsing the others.
    public static func mayHoldBlobs(_ document: [UInt8]?) -> Bool {
        contains(blobMarker, in: document)
    }

    /// Whether `marker` (which starts with `"` and a byte other than `"`) is in `document`.
    static func contains(_ marker: [UInt8], in document: [UInt8]?) -> Bool {
        guard let document, document.count >= marker.count else { return false }
        return document.withUnsafeBufferPointer { bytes in
            var index = 0
            let last = bytes.count - marker.count
            while index <= last {
                if bytes[index] == 0x22 && bytes[index + 1] == marker[1] {
                    var matched = true
                    for offset in 2..<marker.count where bytes[index + offset] != marker[offset] {
                        matched = false
                        break
                    }
                    if matched { return true }
                }
                index += 1
            }
            return false
        }
    }
}
