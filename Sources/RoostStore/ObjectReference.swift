import RoostJSON
import RoostQuery

/// A member of a document whose value is a reference, `{"ffUrl": "/ff/resources/C/G"}`, with the
/// collection and guid its URL names: computed in Swift before the write and stored in
/// `object_refs`, so that a query through a reference (`author.userName eq 'ann'`) seeks the
/// referenced object instead of parsing URLs.
public struct ObjectReference: Sendable, Equatable {
    /// The member's dotted path (`author`, `nested.owner`): field names only, no array elements.
    public var path: String
    public var collection: String
    public var guid: String

    public init(path: String, collection: String, guid: String) {
        self.path = path
        self.collection = collection
        self.guid = guid
    }

    private static let marker = Array(#""ffUrl""#.utf8)

    /// Whether a document may hold a reference; saves parsing the others.
    public static func mayBeIn(_ document: [UInt8]?) -> Bool {
        DerivedRows.contains(marker, in: document)
    }

    /// The references of a document, at most one per path (the first), as deep as a query path
    /// reaches; the first `limit` of them.
    public static func all(in document: JSONObject, atMost limit: Int = .max) -> [ObjectReference] {
        var found: [ObjectReference] = []
        var seen: Set<String> = []
        collect(document, prefix: [], into: &found, seen: &seen, limit: limit)
        return found
    }

    private static func collect(
        _ object: JSONObject, prefix: [String], into found: inout [ObjectReference], seen: inout Set<String>,
        limit: Int
    ) {
        // A query path has at most 16 fields, so a reference it follows is at most 15 deep.
        guard prefix.count < 15 else { return }
        for member in object.members where FieldPath.isIdentifier(member.key) {
            guard found.count < limit else { return }
            guard case .object(let value) = member.value else { continue }
            let path = prefix + [member.key]
            let dotted = path.joined(separator: ".")
            if case .string(let url)? = value["ffUrl"], let target = target(of: url),
                seen.insert(dotted).inserted
            {
                found.append(ObjectReference(path: dotted, collection: target.collection, guid: target.guid))
            }
            collect(value, prefix: path, into: &found, seen: &seen, limit: limit)
        }
    }

    /// The collection and guid a URL names, read as Roost has always read them: what follows
    /// its first 14 characters (`/ff/resources/`), split at the first `/`. Nil when that names
    /// no collection.
    public static func target(of url: String) -> (collection: String, guid: String)? {
        let scalars = Array(url.unicodeScalars)
        guard scalars.count > 14 else { return nil }
        let rest = scalars[14...]
        guard let slash = rest.firstIndex(of: "/"), slash > rest.startIndex else { return nil }
        var collection = String.UnicodeScalarView()
        collection.append(contentsOf: rest[..<slash])
        var guid = String.UnicodeScalarView()
        guid.append(contentsOf: rest[(slash + 1)...])
        return (String(collection), String(guid))
    }

    /// Writes the rows of one object's references (its old rows already gone).
    static func insert<Connection: SQLConnection>(
        _ references: [ObjectReference], collection: String, guid: String, on connection: Connection
    ) throws {
        for reference in references {
            try connection.run(
                """
                INSERT INTO object_refs (owner_collection, owner_guid, path, target_collection, target_guid)
                VALUES (\(collection), \(guid), \(reference.path), \(reference.collection), \(reference.guid))
                ON CONFLICT DO NOTHING
                """)
        }
    }
}

/// Fills `object_refs` from the documents a database already holds: the step of the migration
/// that creates the table.
public struct ObjectReferencesBackfill: MigrationStep {
    public init() {}

    public func run<Connection: SQLConnection>(on connection: Connection) throws {
        var after: Int64 = Int64.min
        while true {
            let batch = try connection.query(
                "SELECT id, collection, guid, document FROM objects WHERE id > \(after) ORDER BY id LIMIT 1000"
            ) {
                (
                    id: $0.integer(0), collection: $0.text(1) ?? "", guid: $0.text(2) ?? "",
                    document: $0.bytes(3)
                )
            }
            guard let last = batch.last else { return }
            for row in batch where ObjectReference.mayBeIn(row.document) {
                guard case .object(let document)? = try? JSONParser.parse(row.document) else { continue }
                try ObjectReference.insert(
                    ObjectReference.all(in: document), collection: row.collection, guid: row.guid,
                    on: connection)
            }
            after = last.id
        }
    }
}
