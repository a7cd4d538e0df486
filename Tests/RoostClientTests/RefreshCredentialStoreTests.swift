import Foundation
import RoostClient
import RoostTestSupport
import Synchronization
import Testing

/// Sessions that refresh and their credential store: what is stored, when, and by whom.
@Suite struct RefreshCredentialStoreTests {
    @Test func aRotationTheStoreMissedIsSavedBeforeTheNextExchange() async throws {
        let clock = ManualWallClock()
        let server = try await makeRefreshingServer(clock: clock)
        let storage = TestServer.makeTemporaryDirectory()
        let store = FailingCredentialStore(storage: storage)
        // Whether each exchange presented the refresh token the store held at that moment.
        let presentedStored = Mutex<[Bool]>([])
        let transport = SwitchableTransport(
            port: server.port,
            onSend: { request in
                guard request.path == "/ff/refresh", let body = request.body,
                    let presented = try? JSONDecoder().decode([String: String].self, from: body)[
                        "refreshToken"]
                else { return }
                let stored = (try? storedCredential(in: storage))??.refreshToken
                presentedStored.withLock { $0.append(stored == presented) }
            })
        let client = try makeRefreshingClient(
            port: server.port, clock: clock, storage: storage, transport: transport, credentials: store)
        try await client.register(userName: "kim", password: "correct horse")
        let first = try #require(try storedCredential(in: storage)?.refreshToken)

        // The disk refuses the rotated token: the request goes on with the pair held in memory.
        store.failSaves(1)
        clock.advance(seconds: 61)
        _ = try await client.create(Note(text: "one"))
        #expect(try storedCredential(in: storage)?.refreshToken == first)

        // Saved again before it is exchanged, so the store holds it for as short a time as can be.
        clock.advance(seconds: 61)
        _ = try await client.create(Note(text: "two"))
        #expect(presentedStored.withLock { $0 } == [true, true])
        #expect(try await server.exchanges() == 2)
        #expect(
            try await server.answered(route: "/ff/refresh", status: 401) == 0, "no exchanged token presented")
        let third = try #require(try storedCredential(in: storage)?.refreshToken)
        #expect(third != first)
        #expect(await client.isLoggedIn)
        #expect(try await server.count("Note") == 2)
    }

    @Test func twoClientsOnOneStoreFollowEachOthersRotations() async throws {
        let clock = ManualWallClock()
        let server = try await makeRefreshingServer(clock: clock)
        let storage = TestServer.makeTemporaryDirectory()
        let app = try makeRefreshingClient(port: server.port, clock: clock, storage: storage)
        try await app.register(userName: "lee", password: "correct horse")
        // An extension, say: the same credential store, launched after the login.
        let widget = try makeRefreshingClient(port: server.port, clock: clock, storage: storage)
        for round in 1...2 {
            clock.advance(seconds: 61)
            _ = try await app.create(Note(text: "app \(round)"))
            _ = try await widget.create(Note(text: "widget \(round)"))
        }
        #expect(try await server.exchanges() == 4)
        #expect(try await server.answered(route: "/ff/refresh", status: 401) == 0)
        #expect(await app.isLoggedIn)
        #expect(await widget.isLoggedIn)
        #expect(try await server.count("Note") == 4)
    }

    @Test func aServerThatAlwaysRefreshesIsFollowedWithoutAsking() async throws {
        let clock = ManualWallClock()
        let server = try await makeRefreshingServer(clock: clock, always: true)
        let storage = TestServer.makeTemporaryDirectory()
        let client = try makeRefreshingClient(
            port: server.port, clock: clock, storage: storage, requests: false)
        try await client.register(userName: "hana", password: "correct horse")
        #expect(try storedCredential(in: storage)?.refreshes == true)
        clock.advance(seconds: 61)
        _ = try await client.create(Note(text: "later"))
        #expect(try await server.exchanges() == 1)

        // Seed 003's token resource, on another device: the same kind of session.
        let devicePath = TestServer.makeTemporaryDirectory()
        let device = try makeRefreshingClient(port: server.port, clock: clock, storage: devicePath)
        let issued = try await device.issueToken(identifier: "hana", password: "correct horse")
        let stored = try #require(try storedCredential(in: devicePath))
        #expect(stored.refreshes)
        #expect(stored.sessionId == issued.id)
        #expect(stored.userName == "hana")
        #expect(stored.token.isEmpty)
        clock.advance(seconds: 61)
        _ = try await device.create(Note(text: "from the device"))
        #expect(try await server.exchanges() == 2)

        // Without refresh tokens on the server, asking changes nothing: one stored token.
        let plain = try await makeServer()
        let other = TestServer.makeTemporaryDirectory()
        let asking = try makeRefreshingClient(port: plain.port, clock: clock, storage: other)
        try await asking.register(userName: "ida", password: "correct horse")
        let credential = try #require(try storedCredential(in: other))
        #expect(!credential.refreshes)
        #expect(!credential.token.isEmpty)
    }
}
