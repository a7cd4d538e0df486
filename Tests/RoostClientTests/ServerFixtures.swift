import Foundation
import RoostCore
import RoostServer
import RoostStore
import RoostTestSupport

// Kept apart from the client fixtures: RoostCore and RoostClient both name a type RoostError.

/// Anyone may write anything; users exist for the tests about accounts.
let openDefinition =
    #"{"collections":{"*":{"rules":{"create":"public","update":"public","delete":"public"}}}}"#

/// A server for SDK tests: open rules, cheap password hashing, an optional fixed port (to restart
/// on the same address) and data folder.
func makeServer(
    port: Int = 0, dataDirectory: String? = nil, definition: String = openDefinition, maxBlobBytes: Int? = nil
) async throws
    -> TestServer
{
    let parsed = try AppDefinition.parse(Array(definition.utf8))
    return try await TestServer(dataDirectory: dataDirectory) { configuration in
        configuration.port = port
        if let maxBlobBytes { configuration.maxBlobBytes = maxBlobBytes }
        configuration.appDefinition = parsed
        configuration.passwordHasher = PasswordHasher.cheapForTests()
    }
}

/// Empties the server's idempotency records, as if they had expired.
func forgetIdempotencyKeys(of server: TestServer) async throws {
    let database = try SQLiteDatabase(path: server.dataDirectory + "/roost.sqlite", migrations: [])
    _ = try await database.write { try $0.run("DELETE FROM idempotency_keys") }
}
