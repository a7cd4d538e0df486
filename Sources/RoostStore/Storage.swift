import Foundation
import RoostQuery

/// An index Roost made on one field of one collection, so that equality and range queries on it
/// seek instead of scan.
public struct FieldIndex: Sendable, Equatable {
    public let name: String
    public let collection: String
    public let field: String

    public init(name: String, collection: String, field: String) {
        self.name = name
        self.collection = collection
        self.field = field
    }

    /// The index of one field, named after its collection and field in every driver.
    public init(collection: String, field: FieldPath) {
        self.init(name: "field:\(collection):\(field)", collection: collection, field: field.description)
    }
}

/// Field indexes, from `roost index` and the app definition's `indexes`.
public protocol FieldIndexStore: Sendable {
    /// Creates the index if it does not exist.
    @discardableResult
    func createIndex(collection: String, field: FieldPath) async throws -> FieldIndex
    /// Drops the index of a field; false if there was none.
    func dropIndex(collection: String, field: FieldPath) async throws -> Bool
    /// The field indexes, by name.
    func fieldIndexes() async throws -> [FieldIndex]
}

/// Which blobs objects refer to, for garbage collection of blob bytes.
public protocol BlobReferenceStore: Sendable {
    /// Every blob some object refers to.
    func referencedBlobs() async throws -> Set<String>
    /// Removes those of these blobs that are still unused: no object refers to them, no upload
    /// claimed them after `cutoff`, and their bytes have not changed since. No write that refers
    /// to a blob may commit between its check and its removal. Returns the removed.
    func removeUnusedBlobs(_ digests: [String], unusedSince cutoff: Date, from storage: any BlobStorage)
        async throws -> Set<String>
    /// Forgets claims made before `cutoff`: their uploads have committed or died by now.
    func forgetBlobClaims(madeBefore cutoff: Date) async throws
    /// How many members refer to this blob.
    func referenceCount(of sha256: String) async throws -> Int
}

/// Every store of one database: what a server, and the commands that work on its data, open.
/// The embedded SQLite database and PostgreSQL each provide one.
public protocol Storage: Sendable {
    var objectStore: any ObjectStore & FieldIndexStore & BlobReferenceStore { get }
    /// The same objects as administrators browse them: collections, keyset pages.
    var collectionBrowser: any CollectionBrowsing { get }
    var accountStore: any AccountStore { get }
    var idempotencyStore: any IdempotencyStore { get }
    /// The log every object write appends to, which realtime streams read.
    var changeLog: any ChangeLog { get }
    /// The durable outbox of ASYNC script handlers: dispatch cursor, lease, failed runs.
    var scriptOutbox: any ScriptOutboxStore { get }
    /// Devices' push tokens and the push outbox.
    var pushStore: any PushStore { get }
    /// The mail outbox and the password-reset tokens.
    var mailStore: any MailStore { get }
    /// E-mail verification and change tokens, beside the accounts.
    var emailTokens: any EmailTokenStore { get }
    /// Refresh tokens, beside the sessions they belong to.
    var refreshStore: any RefreshStore { get }
    /// Sign-in identities (Apple, Google) and the identity tokens' used nonces.
    var identityStore: any IdentityStore { get }
    /// Where the login throttle counts failures: shared by every instance on the database.
    var loginFailures: any LoginFailureStore { get }
    /// Where instances sharing the database keep the app definition; nil when one server reads
    /// its own file.
    var sharedDefinitions: (any SharedDefinitionStore)? { get }
    /// Lines for `/metrics` in Prometheus' text format, each ending in a newline; may be empty.
    func metrics() -> String
    /// Finishes the work in flight and closes every connection.
    func close() async
}
