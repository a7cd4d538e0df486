import Foundation
import RoostPostgres

/// A fresh PostgreSQL database for one test, on the server `ROOST_TEST_DATABASE_URL` names
/// (scripts/test.sh starts a private cluster and sets it). Dropped by ``drop()``.
public struct PostgresTestDatabase: Sendable {
    /// The variable naming the test server.
    public static let environmentVariable = "ROOST_TEST_DATABASE_URL"

    /// The fresh database.
    public let configuration: PostgresConfiguration
    public let name: String
    private let server: PostgresConfiguration

    /// The test server's configuration; throws, failing the test, when the variable is unset.
    public static func serverConfiguration() throws -> PostgresConfiguration {
        guard let url = ProcessInfo.processInfo.environment[environmentVariable], !url.isEmpty else {
            throw MissingTestDatabase()
        }
        return try PostgresConfiguration(connectionString: url)
    }

    /// Creates `roost_t_<random>` on the test server.
    public static func create(on server: PostgresConfiguration? = nil) async throws -> PostgresTestDatabase {
        let server = try server ?? serverConfiguration()
        let name = "roost_t_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        try await administer(server, "CREATE DATABASE \(name)")
        return PostgresTestDatabase(
            configuration: server.replacingDatabase(with: name), name: name, server: server)
    }

    /// Drops the database, closing any connection still on it.
    public func drop() async throws {
        try await Self.administer(server, "DROP DATABASE IF EXISTS \(name) WITH (FORCE)")
    }

    /// Runs `body` with a fresh database, dropped afterwards even when `body` throws.
    public static func with<T>(_ body: (PostgresTestDatabase) async throws -> T) async throws -> T {
        let database = try await create()
        do {
            let result = try await body(database)
            try await database.drop()
            return result
        } catch {
            try? await database.drop()
            throw error
        }
    }

    private static func administer(_ server: PostgresConfiguration, _ statement: String) async throws {
        var configuration = server
        configuration.poolSize = 1
        // CREATE DATABASE waits its turn behind the others of a parallel test run.
        configuration.statementTimeout = .seconds(300)
        let admin = try PostgresDatabase(configuration: configuration, migrations: [])
        do {
            try await admin.read { try $0.execute(statement) }
        } catch {
            await admin.close()
            throw error
        }
        await admin.close()
    }
}

/// The PostgreSQL tests need a server: they fail, never pass silently, without one.
public struct MissingTestDatabase: Error, CustomStringConvertible {
    public var description: String {
        "\(PostgresTestDatabase.environmentVariable) is not set: run the tests with scripts/test.sh, which starts "
            + "a private PostgreSQL cluster, or start one with `scripts/postgres-test-cluster.sh start` and export "
            + "the URL it prints as \(PostgresTestDatabase.environmentVariable)."
    }
}
