import RoostPostgres
import RoostServer

/// `roost serve` options for the database: the embedded SQLite default, or PostgreSQL shared by
/// several instances.
extension ServeOption {
    static let database: [ServeOption] = [
        ServeOption(
            flag: "--database", variable: "ROOST_DATABASE_URL", valueName: "URL",
            help:
                "keep everything in PostgreSQL instead of the data folder's SQLite database, so that several instances can share it: postgres://USER:PASSWORD@HOST:PORT/DB or libpq's key=value string (prefer the variable: a password on the command line shows in ps)"
        ) {
            // Checked now, so that a malformed URL is a usage error; its text never reaches a log.
            _ = try parsedDatabaseURL($1)
            $0.databaseURL = $1
        },
        ServeOption(
            flag: "--database-connections", variable: "ROOST_DATABASE_CONNECTIONS", valueName: "N",
            help: "connections to PostgreSQL, each on a thread of its own (default 8)"
        ) {
            $0.databaseConnections = try integer($1, flag: "--database-connections", range: 1...256)
        },
    ]

    /// The URL as the driver reads it; a usage error saying what is expected otherwise.
    static func parsedDatabaseURL(_ text: String) throws -> PostgresConfiguration {
        do {
            return try PostgresConfiguration(connectionString: text)
        } catch {
            throw UsageError(message: "--database: \(error)")
        }
    }
}
