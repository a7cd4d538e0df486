import Foundation
import RoostCore
import RoostPostgres
import RoostSQLite
import RoostStore

/// Where an administrator's command finds Roost's data: the data folder's SQLite database, or
/// the PostgreSQL database of `--database` (or `ROOST_DATABASE_URL`) that servers share.
struct CommandDatabase {
    var dataDirectory: String
    var databaseURL: String?

    /// The defaults from the environment.
    init() {
        let environment = ProcessInfo.processInfo.environment
        dataDirectory = environment["ROOST_DATA_DIR"] ?? "./roost-data"
        databaseURL = environment["ROOST_DATABASE_URL"].flatMap { $0.isEmpty ? nil : $0 }
    }

    /// Takes `--data-dir PATH` or `--database URL` when `argument` is one; false otherwise.
    mutating func take(_ argument: String, value: () -> String?) -> Bool {
        switch argument {
        case "--data-dir":
            guard let path = value() else { return false }
            dataDirectory = path
        case "--database":
            guard let url = value() else { return false }
            databaseURL = url
        default: return false
        }
        return true
    }

    /// Nil when there is a database to work on; else prints why not and returns the exit status.
    func requireExisting() -> Int32? {
        databaseURL == nil ? requireRoostDatabase(dataDirectory) : nil
    }

    /// Runs `body` with every store open, and closes them after.
    func withStorage<T>(_ body: (any Storage) async throws -> T) async throws -> T {
        let storage = try open()
        do {
            let result = try await body(storage)
            await storage.close()
            return result
        } catch {
            await storage.close()
            throw error
        }
    }

    /// Opens every store: PostgreSQL (migrated, as a server would) with `--database`, else the
    /// data folder's SQLite database.
    func open() throws -> any Storage {
        guard let databaseURL else {
            return try SQLiteStorage(directory: dataDirectory, collections: .builtIn)
        }
        var configuration = try PostgresConfiguration(connectionString: databaseURL)
        configuration.poolSize = 2
        return try PostgresStorage(configuration: configuration, collections: .builtIn, listening: false)
    }
}
