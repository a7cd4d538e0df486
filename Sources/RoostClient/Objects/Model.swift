import Foundation

/// A type stored in a Roost collection: any `Codable` value. The collection is the type's name
/// unless the type says otherwise.
public protocol RoostModel: Codable, Sendable {
    /// The collection the type's objects live in.
    static var collection: String { get }
}

extension RoostModel {
    /// The type's name.
    public static var collection: String { String(describing: Self.self) }
}

/// What Roost keeps about every object, apart from the app's own fields (FatFractal's
/// `metaDataForObj:`).
public struct ObjectMetadata: Codable, Sendable, Hashable {
    /// The object's id in its collection.
    public let guid: String
    /// `/ff/resources/{Collection}/{guid}`.
    public let ffUrl: String
    /// The guid of the user who created the object; nil when created anonymously.
    public let createdBy: String?
    /// Milliseconds since 1970.
    public let createdAt: Int64
    /// The guid of the user who changed the object last; nil when anonymous.
    public let updatedBy: String?
    /// Milliseconds since 1970.
    public let updatedAt: Int64
    /// 1 on create, one more on each change; `If-Match` sends it.
    public let version: Int

    /// ``createdAt`` as a date.
    public var creationDate: Date { Date(timeIntervalSince1970: Double(createdAt) / 1000) }
    /// ``updatedAt`` as a date.
    public var updateDate: Date { Date(timeIntervalSince1970: Double(updatedAt) / 1000) }

    /// The fields the server owns; the SDK leaves them out of what it sends.
    static let fields: Set<String> = [
        "guid", "ffUrl", "createdBy", "createdAt", "updatedBy", "updatedAt", "version",
    ]
}

/// An object as stored: the app's model plus its metadata, kept apart so models need no
/// Roost fields. Reads the model's properties directly: `post.text` for `post.value.text`.
@dynamicMemberLookup
public struct Stored<Model: RoostModel>: Sendable, Decodable {
    /// The app's fields.
    public var value: Model
    /// Roost's fields.
    public let metadata: ObjectMetadata
    /// Whether the object shows writes made on this device that wait in the offline queue (a
    /// queued create, update or patch), as Firestore's `hasPendingWrites`.
    public internal(set) var hasPendingWrites = false
    /// Where the read found the object: the server, the disk cache, or only this device.
    public internal(set) var origin = ReadOrigin.server
    /// The object as read, metadata included: what queued writes are applied to.
    let document: [String: JSON]?
    /// The model as read: what an update diffs against, so it sends only the fields that
    /// changed (and never touches fields the model does not know). Nil when the app made it.
    let original: Model?

    /// An object from its parts.
    public init(value: Model, metadata: ObjectMetadata) {
        self.value = value
        self.metadata = metadata
        document = nil
        original = nil
    }

    init(value: Model, metadata: ObjectMetadata, document: [String: JSON]) {
        self.value = value
        self.metadata = metadata
        self.document = document
        original = value
    }

    public init(from decoder: any Decoder) throws {
        value = try Model(from: decoder)
        metadata = try ObjectMetadata(from: decoder)
        if case .object(let fields) = try JSON(from: decoder) { document = fields } else { document = nil }
        original = value
    }

    /// A property of the model.
    public subscript<Property>(dynamicMember keyPath: KeyPath<Model, Property>) -> Property {
        value[keyPath: keyPath]
    }

    /// A property of the model, to change before an update.
    public subscript<Property>(dynamicMember keyPath: WritableKeyPath<Model, Property>) -> Property {
        get { value[keyPath: keyPath] }
        set { value[keyPath: keyPath] = newValue }
    }

    /// The object's guid.
    public var guid: String { metadata.guid }

    /// A reference to this object, to store in another.
    public var ref: Ref<Model> { Ref(guid: metadata.guid) }
}

extension Stored: Equatable where Model: Equatable {
    /// Equal when the model, the metadata and the pending-writes mark are.
    public static func == (lhs: Stored, rhs: Stored) -> Bool {
        lhs.value == rhs.value && lhs.metadata == rhs.metadata && lhs.hasPendingWrites == rhs.hasPendingWrites
    }
}

/// Where a read's answer came from.
public enum ReadOrigin: Sendable, Equatable {
    /// The server, just now (a 304 revalidation counts: the server vouched for the copy).
    case server
    /// The disk cache: the server could not be reached, or ``CachePolicy/cacheElseNetwork``.
    case cache
    /// Only this device: a queued create, or a query the server never answered, evaluated on
    /// cached objects (``OfflineQueryPolicy/answerFromCachedObjects``).
    case device
}

/// A reference to an object of another collection, stored as `{"ffUrl": …}`. When read with
/// `depthRef`, the referenced object comes inlined in ``object``.
public struct Ref<Target: RoostModel>: Codable, Sendable, Hashable {
    /// `/ff/resources/{Collection}/{guid}`.
    public let ffUrl: String
    /// The referenced object, when the read inlined it.
    public let object: Stored<Target>?

    /// A reference to the object with this guid in `Target`'s collection.
    public init(guid: String) {
        ffUrl = "/ff/resources/\(Target.collection)/\(guid)"
        object = nil
    }

    /// The referenced object's guid.
    public var guid: String { String(ffUrl.split(separator: "/").last ?? "") }

    private enum CodingKeys: String, CodingKey {
        case ffUrl, guid
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        ffUrl = try container.decode(String.self, forKey: .ffUrl)
        // An inlined object carries its metadata; a bare reference only its URL.
        object = container.contains(.guid) ? try? Stored<Target>(from: decoder) : nil
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(ffUrl, forKey: .ffUrl)
    }

    /// References are equal when they point to the same object.
    public static func == (lhs: Ref, rhs: Ref) -> Bool { lhs.ffUrl == rhs.ffUrl }
    /// Hashes the URL the reference points to.
    public func hash(into hasher: inout Hasher) { hasher.combine(ffUrl) }
}

/// What to do with a write when the server cannot take it now.
public enum OfflinePolicy: Sendable {
    /// Throw the network error; nothing is kept.
    case failWhenOffline
    /// Keep the write in the on-disk queue and deliver it, exactly once, when the server is back.
    case queueWhenOffline
}

/// Where a write ended up.
public enum WriteOutcome<Model: RoostModel>: Sendable {
    /// The server has it; here is the object as stored.
    case delivered(Stored<Model>)
    /// It waits in the offline queue.
    case queued(QueuedOperation)

    /// The object's guid, known at once even for a queued create.
    public var guid: String {
        switch self {
        case .delivered(let stored): stored.guid
        case .queued(let operation): operation.guid
        }
    }

    /// The stored object, when delivered.
    public var stored: Stored<Model>? {
        if case .delivered(let stored) = self { return stored }
        return nil
    }
}

/// Where a delete ended up.
public enum DeleteOutcome: Sendable, Equatable {
    /// The server deleted it.
    case deleted
    /// The server had no such object (never created, or already deleted elsewhere).
    case notFound
    /// It waits in the offline queue.
    case queued(QueuedOperation)
}
