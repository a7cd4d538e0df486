import Foundation
import RoostCore
import RoostPostgres
import RoostSQLite
import RoostStore

/// The database the API tests' servers run on: the embedded SQLite default, or PostgreSQL when
/// `ROOST_TEST_BACKEND=postgres` (scripts/test.sh runs the API suites both ways). One suite,
/// two backends: the tests are the same, only the servers differ.
public enum TestBackend: String, Sendable {
    case sqlite
    case postgres

    /// The variable that chooses the backend.
    public static let environmentVariable = "ROOST_TEST_BACKEND"

    /// The backend of this test run.
    public static let current: TestBackend =
        ProcessInfo.processInfo.environment[environmentVariable].flatMap(TestBackend.init(rawValue:))
        ?? .sqlite

    /// Whether servers keep their data in the data folder's SQLite file, which some tests open
    /// directly.
    public static var isSQLite: Bool { current == .sqlite }

    /// A fresh PostgreSQL database for the server whose data folder is `directory`: the same one
    /// again when a test restarts a server on the same folder (the folder remembers its name).
    public static func databaseURL(for directory: String) async throws -> String {
        if let recorded = recordedDatabaseURL(for: directory) { return recorded }
        let marker = directory + "/test-database-url"
        let database = try await PostgresTestDatabase.create()
        try database.configuration.connectionString.write(toFile: marker, atomically: true, encoding: .utf8)
        return database.configuration.connectionString
    }

    /// The database a test server on `directory` made, if any.
    public static func recordedDatabaseURL(for directory: String) -> String? {
        guard current == .postgres else { return nil }
        return try? String(contentsOfFile: directory + "/test-database-url", encoding: .utf8)
    }

    /// `--database URL` for a `roost` process on `directory` when the tests run on PostgreSQL
    /// and a server on that folder made its database; nothing otherwise.
    public static func databaseArguments(for directory: String) -> [String] {
        recordedDatabaseURL(for: directory).map { ["--database", $0] } ?? []
    }

    /// The `roost` commands that take `--database`.
    public static let commandsTakingDatabase: Set<String> = ["users", "index", "script"]
}

extension TestBackend {
    /// Every store of the database a test server on `directory` uses, opened beside it, as an
    /// administrator's command would open it.
    public static func openStorage(for directory: String) async throws -> any Storage {
        guard current == .postgres else {
            return try SQLiteStorage(directory: directory, collections: .builtIn)
        }
        var configuration = try PostgresConfiguration(
            connectionString: try await databaseURL(for: directory))
        configuration.poolSize = 2
        configuration.idleConnectionTimeout = .seconds(1)
        return try PostgresStorage(configuration: configuration, collections: .builtIn, listening: false)
    }

    /// The blob store a test server on `directory` uses, opened beside it as `roost blobs gc`
    /// would: the data folder's files, or on PostgreSQL the database's chunk rows (with a cache
    /// folder of its own next to the server's).
    public static func openBlobStorage(for directory: String) async throws -> any BlobStorage {
        guard current == .postgres else { return try FileBlobStorage(dataDirectory: directory) }
        let beside = directory + "-blobs-beside"
        try FileManager.default.createDirectory(atPath: beside, withIntermediateDirectories: true)
        return try PostgresBlobStorage(
            dataDirectory: beside,
            configuration: PostgresConfiguration(connectionString: try await databaseURL(for: directory)))
    }
}
