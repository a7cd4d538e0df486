import Foundation
import RoostClient
import Testing

/// Refresh rules that need an answer no Roost server gives.
@Suite struct RefreshUnitTests {
    @Test func aServerWithoutRefreshEndsTheSessionAndKeepsTheQueue() async throws {
        let now = Guarded(Date(timeIntervalSince1970: 1_790_000_000))
        let transport = ScriptedTransport([
            ScriptedTransport.unreachable,
            ScriptedTransport.json(404, #"{"status":404,"code":"not_found","message":"m","details":{}}"#),
        ])
        let session = Credential(
            token: "", userGuid: "u1", userName: "al", refreshToken: "r1", sessionId: "s1", deviceId: "d1")
        let client = try makeUnitClient(transport, credential: session) { configuration in
            configuration.now = { now.withLock { $0 } }
        }
        _ = try await client.create(Note(text: "a"), guid: "g1", policy: .queueWhenOffline)
        // Within the back-off: no second exchange yet.
        _ = try await client.delete(Note.self, guid: "g2", policy: .queueWhenOffline)
        #expect(transport.requests.count == 1)

        now.withLock { $0 += 1 }
        // A 404 would drop the create and settle the delete: it counts as the 401 it means.
        #expect(await client.flush().state == .waitingForLogin)
        #expect(await client.pendingOperations.map(\.kind) == [.create, .delete])
        #expect(await !client.isLoggedIn)
        #expect(transport.requests.map(\.path) == ["/ff/refresh", "/ff/refresh"])
        let body = try JSONDecoder().decode(JSON.self, from: try #require(transport.requests[1].body))
        #expect(body == ["refreshToken": "r1"])
        #expect(transport.requests[1].headers["Authorization"] == nil)
    }
}
