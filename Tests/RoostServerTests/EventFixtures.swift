import Foundation
import RoostCore
import RoostServer
import RoostTestSupport

/// Opens `GET /ff/events?…` and, when it is a stream, waits until it is subscribed: every write
/// that commits afterwards reaches it.
func subscribe(_ server: TestServer, _ query: String, headers: [(String, String)] = []) async throws
    -> EventStreamReader
{
    let reader = try await EventStreamReader(port: server.port, path: "/ff/events?" + query, headers: headers)
    if reader.status == 200 {
        guard try await reader.waitForComment(containing: "subscribed") else {
            throw TestClientError(description: "the stream ended before it was subscribed")
        }
    }
    return reader
}

/// A server with open rules and event limits of the test's choosing.
func makeEventServer(
    _ configure: @escaping (inout EventLimits) -> Void = { _ in }, writeTimeout: Int? = nil
) async throws -> TestServer {
    try await TestServer { configuration in
        configuration.appDefinition = openRules
        configuration.passwordHasher = PasswordHasher.cheapForTests()
        // Every stream of these tests comes from 127.0.0.1: one client address, hundreds of streams.
        configuration.maxConnectionsPerClient = 2_000
        if let writeTimeout { configuration.writeTimeout = writeTimeout }
        configure(&configuration.events)
    }
}

/// Percent-encodes a query parameter's value.
func encoded(_ text: String) -> String {
    text.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? text
}
