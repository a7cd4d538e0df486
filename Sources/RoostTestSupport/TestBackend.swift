import Foundation
import RoostPostgres

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
        ProcessInfo.processInfo.environment[environmentVariable].flatMap(TestBackend.init(rawValue:)) ?? .sqlite

    /// Whether servers keep their data in the data folder's SQLite file, which some tests open
    /// directly.
    public static var isSQLite: Bool { current == .sqlite }

    /// A fresh PostgreSQL database for the server whose data folder is `directory`: the same one
    /// again when a test restarts a server on the same folder (the folder remembers its name).
    public static func databaseURL(for directory: String) async throws -> String {
        let marker = directory + "/test-database-url"
        if let recorded = try? String(contentsOfFile: marker, encoding: .utf8) { return recorded }
        let database = try await PostgresTestDatabase.create()
        try database.configuration.connectionString.write(toFile: marker, atomically: true, encoding: .utf8)
        return database.configuration.connectionString
    }
}
