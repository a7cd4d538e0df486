import Foundation
import RoostClient
import RoostTestSupport
import Synchronization
import Testing

/// Sessions that refresh, through the SDK against a real server with one-minute access tokens:
/// the clocks move, nobody waits a minute.
@Suite struct RefreshClientTests {
    let objectRoute = "/ff/resources/:collection/:guid"

    @Test func onlyTheRefreshTokenIsStoredAndItRotates() async throws {
        let clock = ManualWallClock()
        let server = try await makeRefreshingServer(clock: clock)
        let storage = TestServer.makeTemporaryDirectory()
        let transport = SwitchableTransport(port: server.port)
        let client = try makeRefreshingClient(
            port: server.port, clock: clock, storage: storage, transport: transport)
        try await client.register(userName: "alice", password: "correct horse")
        let note = try await client.create(Note(text: "first"))

        let first = try #require(try storedCredential(in: storage))
        let access = try #require(transport.sentTokens.last)
        #expect(first.token == "", "the access token lives in memory only")
        #expect(first.refreshes)
        #expect(first.deviceId == client.deviceId)
        #expect(first.sessionId != nil)
        #expect(first.refreshExpiresAt == clock.nowMilliseconds() + 30 * 24 * 3600 * 1000)
        let file = try String(contentsOfFile: storage + "/credential.json", encoding: .utf8)
        #expect(!file.contains(access))
        #expect(!file.contains("correct horse"))
        #expect(try await server.exchanges() == 0)

        // Past the margin (half the minute): the next request exchanges first, once.
        clock.advance(seconds: 31)
        #expect(try await client.fetch(Note.self, guid: note.guid, cachePolicy: .networkOnly).text == "first")
        #expect(try await server.exchanges() == 1)
        let second = try #require(try storedCredential(in: storage))
        #expect(second.refreshToken != first.refreshToken)
        #expect(second.sessionId == first.sessionId)
        #expect(transport.sentTokens.last != access)
        #expect(try await server.answered(route: objectRoute, status: 401) == 0, "renewed ahead of expiry")
        // The new access token serves until its own renewal is due.
        _ = try await client.fetch(Note.self, guid: note.guid, cachePolicy: .networkOnly)
        #expect(try await server.exchanges() == 1)
    }

    @Test func tenRequestsRefusedAsExpiredShareOneExchange() async throws {
        let serverClock = ManualWallClock()
        let server = try await makeRefreshingServer(clock: serverClock)
        // Each access token an exchange issued, with the refresh token issued beside it; a request
        // that carries one finds that refresh token already stored.
        let storage = TestServer.makeTemporaryDirectory()
        let issued = Mutex<[String: String]>([:])
        let unstored = Atomic<Int>(0)
        let transport = SwitchableTransport(port: server.port) { request in
            guard let bearer = request.headers["Authorization"]?.dropFirst(7),
                let refresh = issued.withLock({ $0[String(bearer)] })
            else { return }
            if (try? storedCredential(in: storage))??.refreshToken != refresh {
                unstored.add(1, ordering: .relaxed)
            }
        } onAnswer: { request, response in
            guard request.path == "/ff/refresh", response.status == 200,
                let pair = try? JSONDecoder().decode([String: JSON].self, from: response.body),
                let token = pair["token"]?.stringValue, let refresh = pair["refreshToken"]?.stringValue
            else { return }
            issued.withLock { $0[token] = refresh }
        }
        // The device's clock stays behind: the server's 401 `token_expired` starts the exchange.
        let client = try makeRefreshingClient(
            port: server.port, clock: ManualWallClock(), storage: storage, transport: transport)
        try await client.register(userName: "bob", password: "correct horse")
        let note = try await client.create(Note(text: "shared"))
        serverClock.advance(seconds: 61)

        let texts = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<10 {
                group.addTask {
                    try await client.fetch(Note.self, guid: note.guid, cachePolicy: .networkOnly).text
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(texts == Array(repeating: "shared", count: 10))
        #expect(try await server.exchanges() == 1)
        #expect(try await server.answered(route: "/ff/refresh", status: 401) == 0)
        let expired = try await server.answered(route: objectRoute, status: 401)
        #expect((1...10).contains(expired), "each request is refused at most once")
        #expect(await client.isLoggedIn)
        #expect(issued.withLock { $0.count } == 1)
        let renewed = transport.sentTokens.filter { token in issued.withLock { $0[token] } != nil }
        #expect(renewed.count == expired, "each refused request sent once more with the new token")
        #expect(unstored.load(ordering: .relaxed) == 0, "the rotated refresh token is stored before use")
    }

    @Test func tenRequestsDueForRenewalShareOneExchange() async throws {
        let clock = ManualWallClock()
        let server = try await makeRefreshingServer(clock: clock)
        let client = try makeRefreshingClient(port: server.port, clock: clock)
        try await client.register(userName: "bea", password: "correct horse")
        let note = try await client.create(Note(text: "shared"))
        clock.advance(seconds: 61)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<10 {
                group.addTask {
                    _ = try await client.fetch(Note.self, guid: note.guid, cachePolicy: .networkOnly)
                }
            }
            try await group.waitForAll()
        }
        #expect(try await server.exchanges() == 1)
        #expect(try await server.answered(route: objectRoute, status: 401) == 0)
        #expect(try await server.answered(route: objectRoute, status: 200) == 10)
    }

    @Test func anExpiryMidQueueLosesAndRepeatsNoWrite() async throws {
        let serverClock = ManualWallClock()
        let server = try await makeRefreshingServer(clock: serverClock)
        // After the third create lands, the server's clock passes the access token's expiry.
        let creates = Atomic<Int>(0)
        let transport = SwitchableTransport(
            port: server.port,
            onAnswer: { request, response in
                if request.method == "POST", request.path.hasPrefix("/ff/resources/"), response.status == 201,
                    creates.add(1, ordering: .relaxed).newValue == 3
                {
                    serverClock.advance(seconds: 61)
                }
            })
        let storage = TestServer.makeTemporaryDirectory()
        let client = try makeRefreshingClient(
            port: server.port, clock: ManualWallClock(), storage: storage, transport: transport)
        try await client.register(userName: "carol", password: "correct horse")
        let before = try await storedCredential(in: storage)?.refreshToken

        transport.setOffline(true)
        var guids: [String] = []
        for index in 1...6 {
            guids.append(try await client.create(Note(text: "note \(index)"), policy: .queueWhenOffline).guid)
        }
        _ = try await client.patch(
            Note.self, guid: guids[0], ["count": 1], expectedVersion: 1, policy: .queueWhenOffline)
        _ = try await client.patch(
            Note.self, guid: guids[4], ["count": 5], expectedVersion: 1, policy: .queueWhenOffline)
        #expect(await client.pendingOperations.count == 8)
        #expect(await client.flush().state == .retrying(after: 0.1))

        transport.setOffline(false)
        #expect(await client.flush() == FlushResult(delivered: 8, failed: 0, state: .idle))
        #expect(await client.pendingOperations.isEmpty)
        #expect(try await server.exchanges() == 1)
        #expect(try await server.answered(route: "/ff/resources/:collection", status: 401) == 1)
        #expect(try await storedCredential(in: storage)?.refreshToken != before)

        let items = try await server.items("Note")
        #expect(items.count == 6)
        #expect(Set(items.compactMap { $0["guid"] as? String }) == Set(guids))
        #expect(Set(items.compactMap { $0["text"] as? String }) == Set((1...6).map { "note \($0)" }))
        let patched = items.filter { $0["count"] != nil }
        #expect(patched.count == 2)
        #expect(patched.allSatisfy { $0["version"] as? Int == 2 })
    }

    @Test func anExchangeWithoutNetworkKeepsTheSessionAndIsRetried() async throws {
        let clock = ManualWallClock()
        let server = try await makeRefreshingServer(clock: clock)
        let storage = TestServer.makeTemporaryDirectory()
        let transport = SwitchableTransport(port: server.port)
        let client = try makeRefreshingClient(
            port: server.port, clock: clock, storage: storage, transport: transport)
        try await client.register(userName: "dan", password: "correct horse")
        let before = try #require(try storedCredential(in: storage))

        // Due for renewal but not expired: the exchange fails, the old token still serves.
        clock.advance(seconds: 31)
        transport.setRefreshOffline(true)
        _ = try await client.create(Note(text: "early"))
        #expect(transport.refreshAttempts == 1)

        // Expired, and the back-off (0.5 s, reconnectDelay) over: one more try, then 1 s.
        clock.advance(seconds: 30)
        _ = try await client.create(Note(text: "a"), policy: .queueWhenOffline)
        _ = try await client.create(Note(text: "b"), policy: .queueWhenOffline)
        #expect(await client.flush().state == .retrying(after: 0.1))
        #expect(transport.refreshAttempts == 2)
        #expect(await client.pendingOperations.count == 2)
        #expect(await client.isLoggedIn, "no answer is not a sign-out")
        #expect(try storedCredential(in: storage) == before)
        clock.advance(milliseconds: 1100)
        #expect(await client.flush().state == .retrying(after: 0.1))
        #expect(transport.refreshAttempts == 3)
        do {
            _ = try await client.create(Note(text: "now"))
            Issue.record("created without a token")
        } catch let error as RoostError {
            #expect(error.code == .networkUnreachable)
            #expect(error.details["retryAfter"] == .number(2))
        }
        #expect(transport.refreshAttempts == 3)

        transport.setRefreshOffline(false)
        clock.advance(seconds: 2)
        #expect(await client.flush() == FlushResult(delivered: 2, failed: 0, state: .idle))
        #expect(transport.refreshAttempts == 4)
        #expect(try await server.exchanges() == 1)
        #expect(try await server.count("Note") == 3)
    }

    @Test func reuseElsewhereSignsOutAndKeepsTheQueueForItsOwner() async throws {
        let clock = ManualWallClock()
        let server = try await makeRefreshingServer(clock: clock)
        let storage = TestServer.makeTemporaryDirectory()
        let transport = SwitchableTransport(port: server.port)
        let client = try makeRefreshingClient(
            port: server.port, clock: clock, storage: storage, transport: transport)
        let erin = try await client.register(userName: "erin", password: "correct horse")
        let note = try await client.create(Note(text: "erin's"))
        let stolen = try #require(try storedCredential(in: storage)?.refreshToken)
        clock.advance(seconds: 61)
        _ = try await client.fetch(Note.self, guid: note.guid, cachePolicy: .networkOnly)
        #expect(try await server.exchanges() == 1)

        transport.setOffline(true)
        _ = try await client.create(Note(text: "queued 1"), policy: .queueWhenOffline)
        _ = try await client.patch(
            Note.self, guid: note.guid, ["count": 2], expectedVersion: 1, policy: .queueWhenOffline)
        // A thief presents the exchanged token: the server ends the whole session.
        #expect(try await server.exchange(stolen) == (401, "invalid_refresh_token"))

        transport.setOffline(false)
        clock.advance(seconds: 61)
        let asked = Mutex<[String]>([])
        await client.setLoginHandler { error in
            asked.withLock { $0.append(error.code.rawValue) }
            return false
        }
        let events = await client.queueEvents()
        do {
            _ = try await client.fetch(Note.self, guid: note.guid, cachePolicy: .networkOnly)
            Issue.record("read with an ended session")
        } catch let error as RoostError {
            #expect(error.status == 401)
            #expect(error.code == .invalidRefreshToken)
        }
        #expect(asked.withLock { $0 } == ["invalid_refresh_token"], "the app's login handler was asked")
        #expect(await !client.isLoggedIn)
        #expect(await client.currentUser == nil)
        #expect(try storedCredential(in: storage) == nil)
        #expect(await client.pendingOperations.map(\.kind) == [.create, .patch])
        #expect(await client.flush().state == .waitingForLogin)
        var iterator = events.makeAsyncIterator()
        guard case .waitingForLogin(let waiting)? = await iterator.next() else {
            Issue.record("no waitingForLogin event")
            return
        }
        #expect(waiting.owner == erin.guid)

        // Not replayed as another user; delivered once its owner is back.
        try await client.register(userName: "finn", password: "correct horse")
        #expect(await client.flush().state == .waitingForLogin)
        try await client.logout()
        try await client.login(userName: "erin", password: "correct horse")
        #expect(await client.flush() == FlushResult(delivered: 2, failed: 0, state: .idle))
        let items = try await server.items("Note")
        #expect(items.count == 2)
        #expect(items.allSatisfy { $0["createdBy"] as? String == erin.guid })
        #expect(items.first { $0["guid"] as? String == note.guid }?["count"] as? Int == 2)
    }

    @Test func aRelaunchResumesWithTheStoredRefreshToken() async throws {
        let clock = ManualWallClock()
        let server = try await makeRefreshingServer(clock: clock)
        let storage = TestServer.makeTemporaryDirectory()
        let first = try makeRefreshingClient(port: server.port, clock: clock, storage: storage)
        try await first.register(userName: "gus", password: "correct horse")
        try await first.logout()
        let user = try await first.login(userName: "gus", password: "correct horse")
        let note = try await first.create(Note(text: "before"))
        await first.close()
        let stored = try #require(try storedCredential(in: storage))

        clock.advance(seconds: 10)
        let relaunched = try makeRefreshingClient(port: server.port, clock: clock, storage: storage)
        #expect(await relaunched.currentUser?.guid == user.guid)
        #expect(await relaunched.isLoggedIn)
        // No access token survives a launch: the first request exchanges the stored refresh token.
        #expect(
            try await relaunched.fetch(Note.self, guid: note.guid, cachePolicy: .networkOnly).text == "before"
        )
        #expect(try await server.exchanges() == 1)
        let rotated = try #require(try storedCredential(in: storage))
        #expect(rotated.refreshToken != stored.refreshToken)
        #expect(rotated.sessionId == stored.sessionId)
        #expect(try await relaunched.session()?.userName == "gus")

        // Logging out ends the session by its refresh token, even with the access token expired.
        clock.advance(seconds: 61)
        #expect(try await relaunched.logout() == true)
        #expect(
            try await server.exchange(try #require(rotated.refreshToken)) == (401, "invalid_refresh_token"))
    }

    @Test func aChangeStreamGoesOnAcrossAnExpiry() async throws {
        let serverClock = ManualWallClock()
        let server = try await makeRefreshingServer(clock: serverClock)
        let client = try makeRefreshingClient(port: server.port, clock: ManualWallClock())
        try await client.register(userName: "jo", password: "correct horse")
        let recorder = ChangeRecorder<Note>()
        let reading = recorder.record(client.changes(of: Note.self))
        defer { reading.cancel() }
        #expect(await server.openEventStreams(becomes: 1))
        try await server.createNote("before")
        #expect(await recorder.wait(for: 1).count == 1)

        // The server ends the stream as its token expires; it reopens after one exchange and
        // resumes where it left off.
        serverClock.advance(seconds: 61)
        #expect(await eventually(within: 30) { (try? await server.exchanges()) == 1 })
        #expect(await server.openEventStreams(becomes: 1))
        try await server.createNote("after")
        #expect(labels(await recorder.wait(for: 2), \.text) == ["created before", "created after"])
        #expect(await client.isLoggedIn)
        #expect(try await server.exchanges() == 1)
    }
}
