import Foundation
import RoostClient
import RoostTestSupport
import Testing

/// Offline reads against a real server that is stopped and restarted: queued writes show at
/// once, and what the device showed offline is what the server holds once the queue is sent.
@Suite struct OfflineReadIntegrationTests {
    @Test func whatTheDeviceShowsOfflineIsWhatTheServerHoldsAfterwards() async throws {
        let server = try await makeServer()
        let port = server.port
        let storage = TestServer.makeTemporaryDirectory()
        let client = try makeClient(port: port, storage: storage)
        var milk = try await client.create(Note(text: "milk", count: 1))
        let walk = try await client.create(Note(text: "walk", count: 2))
        _ = try await client.create(Note(text: "read", count: 3))
        let open = client.query(Note.self).where("count", .lte, 2).sorted(by: "text")
        #expect(try await open.page().map(\.text) == ["milk", "walk"])
        _ = try await client.fetch(Note.self, guid: milk.guid)
        await server.stop()

        milk.count = 5
        _ = try await client.update(milk, policy: .queueWhenOffline)
        _ = try await client.delete(walk, policy: .queueWhenOffline)
        let call = try await client.create(Note(text: "call", count: 0), policy: .queueWhenOffline)
        #expect(await client.pendingOperations.count == 3)

        let offlinePage = try await open.fetchPage()
        #expect(offlinePage.items.map(\.text) == ["call"])
        #expect(offlinePage.hasPendingWrites)
        let shown = try await client.fetch(Note.self, guid: milk.guid)
        #expect(shown.count == 5 && shown.hasPendingWrites && shown.origin == .cache)
        #expect(try await client.fetch(Note.self, guid: call.guid).origin == .device)

        // Never asked before: answered from the cached objects (the list's and the read's).
        let big = client.query(Note.self).where("count", .gte, 3)
        let answered = try await big.fetchPage()
        #expect(Set(answered.items.map(\.text)) == ["milk", "read"])
        #expect(answered.origin == .device)
        let strictClient = try makeStrictClient(port: port)
        do {
            _ = try await strictClient.query(Note.self).where("count", .gte, 3).page()
            Issue.record("answered with nothing cached")
        } catch let error as RoostError {
            #expect(error.code == "offline_no_cache")
        }

        let restarted = try await makeServer(port: port, dataDirectory: server.dataDirectory)
        _ = restarted
        #expect(await client.flush() == FlushResult(delivered: 3, failed: 0, state: .idle))
        let online = try await open.fetchPage(cachePolicy: .networkOnly)
        #expect(online.items.map(\.text) == offlinePage.items.map(\.text))
        #expect(!online.hasPendingWrites)
        #expect(online.origin == .server)
        let sorted = try await big.sorted(by: "text").page(cachePolicy: .networkOnly)
        #expect(sorted.map(\.text) == ["milk", "read"])
    }

    func makeStrictClient(port: Int) throws -> Roost {
        let url = URL(string: "http://127.0.0.1:\(port)")!
        let storage = TestServer.makeTemporaryDirectory()
        var configuration = RoostConfiguration(
            serverURL: url, storageFolder: storage,
            credentialStore: FileCredentialStore(path: storage + "/credential.json"))
        configuration.deliversInBackground = false
        configuration.offlineQueries = .failWithoutCache
        return try Roost(configuration: configuration)
    }
}
