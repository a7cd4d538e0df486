/// Which objects refer to which blob, derived from the documents: a member whose value is
/// `{"blob": {"sha256": …}}` is a reference. The core lets only the blob endpoints write such
/// values, so the documents are the source of truth and this table their index.
extension SQLiteObjectStore {
    static let blobMigrations = [
        Migration(
            version: 6, name: "blob references",
            sql: """
                CREATE TABLE blob_refs (
                    collection TEXT NOT NULL,
                    guid TEXT NOT NULL,
                    member TEXT NOT NULL,
                    sha256 TEXT NOT NULL,
                    PRIMARY KEY (collection, guid, member)
                ) WITHOUT ROWID;
                CREATE INDEX blob_refs_by_sha256 ON blob_refs (sha256);
                """)
    ]

    private static let blobMarker = Array(#""blob":"#.utf8)

    /// Whether a document may hold a blob member; saves parsing the others.
    static func mayHoldBlobs(_ document: [UInt8]?) -> Bool {
        guard let document, document.count >= blobMarker.count else { return false }
        return document.withUnsafeBufferPointer { bytes in
            var index = 0
            let last = bytes.count - blobMarker.count
            while index <= last {
                if bytes[index] == 0x22 && bytes[index + 1] == 0x62 {  // "b
                    var matched = true
                    for offset in 2..<blobMarker.count where bytes[index + offset] != blobMarker[offset] {
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

    /// Every blob some object refers to.
    public func referencedBlobs() async throws -> Set<String> {
        try database.read { connection in
            Set(try connection.query("SELECT DISTINCT sha256 FROM blob_refs") { $0.text(0) ?? "" })
        }
    }

    /// How many members refer to this blob.
    public func referenceCount(of sha256: String) async throws -> Int {
        try database.read { connection in
            Int(
                try connection.first("SELECT count(*) FROM blob_refs WHERE sha256 = \(sha256)") {
                    $0.integer(0)
                } ?? 0)
        }
    }
}
