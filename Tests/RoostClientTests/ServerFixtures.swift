import Foundation
import RoostCore
import RoostDrivers
import RoostSQLite
import RoostServer
import RoostStore
import RoostTestSupport
import Synchronization

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

/// A server on `clock` whose tokens last a minute and whose streams check them every 100 ms.
func makeExpiringServer(clock: ManualWallClock) async throws -> TestServer {
    let definition = try AppDefinition.parse(Array(openDefinition.utf8))
    return try await TestServer { configuration in
        configuration.appDefinition = definition
        configuration.passwordHasher = PasswordHasher.cheapForTests()
        configuration.clock = clock
        configuration.tokenLifetime = 60
        configuration.events.heartbeat = .milliseconds(100)
    }
}

/// Seed 003's server: one session per user (the single-device policy), an administrator `dave`
/// (made by the real binary), and push through the real APNs client to `gateway`.
func makeSingleDevicePushServer(sendingTo gateway: FakeAPNs) async throws -> TestServer {
    var providers = PushProviderSettings()
    providers.apnsKeyFile = gateway.keyFile
    providers.apnsKeyID = gateway.keyID
    providers.apnsTeamID = gateway.teamID
    providers.apnsProductionURL = gateway.url
    providers.apnsSandboxURL = gateway.url
    providers.caFile = gateway.certificateAuthority
    let sender = try StandardDrivers.pushSender(for: providers)
    let directory = TestServer.makeTemporaryDirectory()
    if TestBackend.current == .postgres { _ = try await TestBackend.databaseURL(for: directory) }
    guard try await RoostProcess(dataDirectory: directory).stop(signal: SIGTERM) == 0 else {
        throw TestClientError(description: "roost serve did not stop cleanly on \(directory)")
    }
    let made = try await runRoost(
        ["users", "create", "dave", "--admin", "--data-dir", directory], input: "dave-password\n")
    guard made.status == 0 else { throw TestClientError(description: made.errorOutput) }
    let definition = try AppDefinition.parse(Array(openDefinition.utf8))
    return try await TestServer(dataDirectory: directory) { configuration in
        configuration.appDefinition = definition
        configuration.passwordHasher = PasswordHasher.cheapForTests()
        configuration.sessionPolicy = .singleDevice
        configuration.push.sender = sender
    }
}

/// A server on `clock` whose logins may ask for refresh tokens (every login gets one with
/// `always`), with one-minute access tokens (`--access-token-lifetime 1m`), and whose streams
/// check their tokens every 100 ms.
func makeRefreshingServer(clock: ManualWallClock, always: Bool = false) async throws -> TestServer {
    let definition = try AppDefinition.parse(Array(openDefinition.utf8))
    return try await TestServer { configuration in
        configuration.appDefinition = definition
        configuration.passwordHasher = PasswordHasher.cheapForTests()
        configuration.clock = clock
        configuration.refreshMode = always ? .always : .optional
        configuration.accessTokenLifetime = 60
        configuration.events.heartbeat = .milliseconds(100)
    }
}
