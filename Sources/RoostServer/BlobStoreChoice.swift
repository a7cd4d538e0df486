import RoostCore
import RoostStore

/// Where blob bytes live (`--blob-store`).
public enum BlobStoreKind: String, Sendable, CaseIterable {
    /// Files in the data folder (`DATA/blobs`), or a folder every instance shares.
    case directory
    /// Chunked rows in the PostgreSQL database, with a local cache of whole blobs.
    case database
}

/// `--blob-store database` without a PostgreSQL database.
public struct BlobStoreConfigurationError: Error, Sendable, CustomStringConvertible {
    public let message: String
    public var description: String { message }

    public init(message: String) { self.message = message }
}

extension ServerConfiguration {
    /// The blob store in force: as chosen, else the database's when there is one.
    public var effectiveBlobStore: BlobStoreKind {
        blobStore ?? (databaseURL == nil ? .directory : .database)
    }
}

/// Opens the stores a configuration names. The program that composes a server (the `roost`
/// executable, the test fixtures) chooses the drivers; the server only uses what they open.
public protocol StorageDrivers: Sendable {
    /// Every store of the database the configuration names.
    func openStorage(_ configuration: ServerConfiguration) throws -> any Storage
    /// The blob store the configuration chooses; throws ``BlobStoreConfigurationError`` when it
    /// cannot be had.
    func openBlobStorage(_ configuration: ServerConfiguration) throws -> any BlobStorage
    /// Blob I/O threads for that blob store.
    func blobIOThreads(_ configuration: ServerConfiguration) -> Int
    /// What checks Apple's and Google's ID tokens; nil: signing in with them is refused.
    func identityVerifier(_ configuration: ServerConfiguration) -> (any IdentityTokenVerifier)?
}

extension StorageDrivers {
    public func identityVerifier(_ configuration: ServerConfiguration) -> (any IdentityTokenVerifier)? { nil }
}
