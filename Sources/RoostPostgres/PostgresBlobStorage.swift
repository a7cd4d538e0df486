import CLibPQ
import Foundation
import RoostStore

#if canImport(Glibc)
    import Glibc
#endif

/// ``BlobStorage`` in PostgreSQL itself, so that instances share blobs without a shared disk (as
/// Parse's GridFS adapter keeps files in its database): a row per blob in `blob_files`, its bytes
/// in `blob_chunks` rows of 256 KiB, written in one transaction (a blob is visible only whole).
///
/// Uploads still land in a local temporary file (`DATA/blobs/tmp`); reads go through a local
/// cache of whole blobs (``BlobCache``, `DATA/blobs/cache`), since the HTTP layer sends a file
/// descriptor. Memory stays bounded by one chunk in either direction, whatever the blob's size.
///
/// Every method blocks its thread; they run on the blob I/O workers, each on a connection
/// borrowed from a small set of the store's own (``BlockingPostgresConnections``).
///
/// An S3-compatible store would fill the protocol the same way, with the bucket where the tables
/// are: see each method.
public final class PostgresBlobStorage: BlobStorage {
    /// Bytes per chunk row: large enough that a 50 MiB blob is 200 round trips, small enough that
    /// a chunk in flight (bound, sent, decoded) costs about a megabyte.
    public static let chunkSize = 256 << 10
    /// The local cache's default bound (`--blob-cache-size`).
    public static let defaultCacheBytes = 1 << 30
    /// The least `statement_timeout` of the store's connections.
    static let statementTimeout: Duration = .seconds(60)
    /// Connections the store opens at most (the blob I/O workers, the sweep, a spare).
    public static let defaultConnections = 4

    /// Temporary files for uploads and fetches (`DATA/blobs/tmp`, named with the process id).
    private let local: FileBlobStorage
    /// The cache's bound in bytes.
    public let cacheBytes: Int
    /// This instance's copies of blobs it read or stored.
    public let cache: BlobCache
    let connections: BlockingPostgresConnections

    /// Uses the database `configuration` names, already migrated with ``migrations``, and the
    /// data folder for temporary files and a cache of at most `cacheBytes`. Connects lazily.
    public init(
        dataDirectory: String, configuration: PostgresConfiguration,
        cacheBytes: Int = PostgresBlobStorage.defaultCacheBytes,
        connections: Int = PostgresBlobStorage.defaultConnections
    ) throws {
        self.cacheBytes = cacheBytes
        local = try FileBlobStorage(dataDirectory: dataDirectory)
        cache = try BlobCache(folder: local.root + "/cache", capacity: cacheBytes)
        var blobConfiguration = configuration
        // A chunk takes milliseconds; a minute covers waiting for another instance that adopts
        // the same digest (its row is locked until its last chunk commits).
        blobConfiguration.statementTimeout = max(configuration.statementTimeout, Self.statementTimeout)
        self.connections = BlockingPostgresConnections(configuration: blobConfiguration, limit: connections)
    }

    /// S3: the same (a local file, uploaded by ``adopt``).
    public func makeTemporaryFile() throws -> (path: String, descriptor: Int32) {
        try local.makeTemporaryFile()
    }

    /// Streams the file into chunk rows in one transaction, a chunk at a time, then moves it into
    /// the cache (or deletes it). A digest stored already (by any instance) is not written again.
    ///
    /// S3: a `HEAD` of the key, then a multipart upload of the file unless the object exists.
    public func adopt(temporaryFile: String, sha256: String) throws {
        guard FileBlobStorage.isDigest(sha256) else {
            throw StoreError.io("could not name a blob '\(sha256.prefix(80))'")
        }
        let file = Glibc.open(temporaryFile, O_RDONLY | O_CLOEXEC)
        guard file >= 0 else { throw BlobCache.failure("open an upload") }
        defer { Glibc.close(file) }
        var status = stat()
        guard fstat(file, &status) == 0 else { throw BlobCache.failure("read an upload's size") }
        let size = Int(status.st_size)
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        try connections.transaction(readOnly: false) { connection in
            // Waits for another instance adopting the same digest, then finds its row.
            let added = try connection.run(
                """
                INSERT INTO blob_files (sha256, size, created_at) VALUES (\(sha256), \(size), \(now))
                ON CONFLICT (sha256) DO NOTHING
                """)
            guard added == 1 else { return }
            var chunk = [UInt8](repeating: 0, count: Self.chunkSize)
            var index = 0
            var sent = 0
            while sent < size {
                let count = try Self.read(file, into: &chunk, count: min(Self.chunkSize, size - sent))
                try connection.run(
                    "INSERT INTO blob_chunks (sha256, chunk_index, bytes) VALUES (\(sha256), \(index), \(Array(chunk[0..<count])))"
                )
                sent += count
                index += 1
            }
        }
        cache.insert(file: temporaryFile, sha256: sha256, size: size)
    }

    /// From the cache; on a miss, the chunks are written to a cache file first, read from one
    /// snapshot, a chunk at a time.
    ///
    /// S3: the same cache, filled by a ranged or whole `GET` of the key.
    public func open(_ sha256: String) throws -> (descriptor: Int32, size: Int)? {
        guard FileBlobStorage.isDigest(sha256) else { return nil }
        return try cache.open(sha256, makeTemporaryFile: local.makeTemporaryFile) { file in
            try connections.transaction(readOnly: true) { connection in
                try Self.copy(sha256, from: connection, to: file)
            }
        }
    }

    /// When the blob was first stored (its rows are never changed afterwards).
    ///
    /// S3: the object's `Last-Modified` from a `HEAD`.
    public func modified(_ sha256: String) throws -> Date? {
        guard FileBlobStorage.isDigest(sha256) else { return nil }
        let created = try connections.transaction(readOnly: true) { connection in
            try connection.first("SELECT created_at FROM blob_files WHERE sha256 = \(sha256)") {
                $0.integer(0)
            }
        }
        return created.map { Date(timeIntervalSince1970: TimeInterval($0) / 1000) }
    }

    /// S3: `ListObjectsV2`, page by page.
    public func stored() throws -> [StoredBlob] {
        try connections.transaction(readOnly: true) { connection in
            try connection.query("SELECT sha256, size, created_at FROM blob_files ORDER BY sha256") { row in
                StoredBlob(
                    sha256: row.text(0) ?? "", size: Int(row.integer(1)),
                    modified: Date(timeIntervalSince1970: TimeInterval(row.integer(2)) / 1000))
            }
        }
    }

    /// Temporary files of dead processes (uploads and fetches cut short). S3: the same, plus
    /// multipart uploads left incomplete (`ListMultipartUploads`, then abort them).
    public func abandonedTemporaryFiles() throws -> [String] {
        try local.abandonedTemporaryFiles()
    }

    /// Deletes the rows (the chunks go with their file row) and this instance's cached copy.
    /// Other instances' copies stay until evicted: the digest names the same bytes forever, and
    /// collection removes only blobs that nothing refers to.
    ///
    /// S3: `DeleteObject`, and the local copy.
    public func remove(_ sha256: String) throws {
        guard FileBlobStorage.isDigest(sha256) else { return }
        try connections.transaction(readOnly: false) { connection in
            try connection.run("DELETE FROM blob_files WHERE sha256 = \(sha256)")
        }
        cache.remove(sha256)
    }

    /// The local cache's size, bound, hits and fetches.
    public func metrics() -> String {
        cache.metrics(capacity: cacheBytes)
    }

    /// Closes the store's connections (the server's shutdown, after the blob workers stopped).
    public func close() {
        connections.close()
    }

    /// Writes the blob's chunks to `file`, checking each chunk's length; false when the blob is
    /// not stored.
    static func copy(_ sha256: String, from connection: PostgresConnection, to file: Int32) throws -> Bool {
        guard
            let size = try connection.first(
                "SELECT size FROM blob_files WHERE sha256 = \(sha256)", { $0.integer(0) })
        else { return false }
        let chunks = (Int(size) + chunkSize - 1) / chunkSize
        for index in 0..<chunks {
            let expected = index == chunks - 1 ? Int(size) - index * chunkSize : chunkSize
            // Written to the file straight from libpq's result: no copy of the chunk on the way.
            let written = try connection.firstBinary(
                "SELECT bytes FROM blob_chunks WHERE sha256 = \(sha256) AND chunk_index = \(index)"
            ) { row in
                try row.withBinaryValue(0) { bytes -> Bool in
                    guard bytes.count == expected else { return false }
                    try write(file, bytes)
                    return true
                }
            }
            guard written == true else {
                throw StoreError.io("blob \(sha256) is incomplete in the database (chunk \(index))")
            }
        }
        return true
    }

    /// Reads exactly `count` bytes (the file does not change while it is adopted).
    private static func read(_ file: Int32, into buffer: inout [UInt8], count: Int) throws -> Int {
        var done = 0
        try buffer.withUnsafeMutableBytes { bytes in
            while done < count {
                let result = Glibc.read(file, bytes.baseAddress! + done, count - done)
                if result < 0, errno == EINTR { continue }
                guard result > 0 else {
                    throw result == 0
                        ? StoreError.io("an upload's file ended before its size")
                        : BlobCache.failure("read an upload")
                }
                done += result
            }
        }
        return done
    }

    private static func write(_ file: Int32, _ bytes: UnsafeRawBufferPointer) throws {
        var done = 0
        while done < bytes.count {
            let result = Glibc.write(file, bytes.baseAddress! + done, bytes.count - done)
            if result < 0, errno == EINTR { continue }
            guard result >= 0 else { throw BlobCache.failure("write a blob to the cache") }
            done += result
        }
    }
}

extension PostgresRow {
    /// The column's bytes as they arrived in a binary result (``PostgresConnection/firstBinary``),
    /// valid only inside `body`; nil for NULL.
    func withBinaryValue<T>(_ column: Int, _ body: (UnsafeRawBufferPointer) throws -> T) rethrows -> T? {
        guard !isNull(column), let value = PQgetvalue(result, row, Int32(column)) else { return nil }
        return try body(
            UnsafeRawBufferPointer(start: value, count: Int(PQgetlength(result, row, Int32(column)))))
    }
}
