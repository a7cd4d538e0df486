import Foundation
import RoostClient
import RoostTestSupport
import Testing

/// The offline queue: nothing lost, nothing repeated, across server restarts and lost replies.
@Suite struct OfflineQueueTests {
    @Test func writesMadeWhileTheServerIsDownAreDeliveredOnceInOrder() async throws {
        let server = try await makeServer()
        let port = server.port
        let storage = TestServer.makeTemporaryDirectory()
        let client = try makeClient(port: port, storage: storage)
        let existing = try await client.create(Note(text: "v1"))
        await server.stop()

        let events = await client.queueEvents()
        let created = try await client.create(Note(text: "offline"), policy: .queueWhenOffline)
        guard case .queued(let operation) = created else {
            Issue.record("delivered while down")
            return
        }
        #expect(operation.kind == .create)
        #expect(operation.guid == created.guid)
        // Writes to the queued object use its guid at once; they follow it in order.
        _ = try await client.patch(
            Note.self, guid: created.guid, ["count": 1], expectedVersion: 1, policy: .queueWhenOffline)
        var stale = existing
        stale.text = "v2"
        _ = try await client.update(stale, policy: .queueWhenOffline)
        stale.text = "v3"
        _ = try await client.update(stale, policy: .queueWhenOffline)
        _ = try await client.delete(Note.self, guid: "never-existed", policy: .queueWhenOffline)
        #expect(await client.pendingOperations.count == 5)
        #expect(await client.flush().state == .retrying(after: 0.1))

        // A later launch finds the queue on disk.
        await client.close()
        let relaunched = try makeClient(port: port, storage: storage)
        #expect(
            await relaunched.pendingOperations.map(\.kind) == [.create, .patch, .patch, .patch, .delete])

        let restarted = try await makeServer(port: port, dataDirectory: server.dataDirectory)
        let result = await relaunched.flush()
        #expect(result == FlushResult(delivered: 5, failed: 0, state: .idle))
        #expect(await relaunched.pendingOperations.isEmpty)

        let offline = try await relaunched.fetch(Note.self, guid: created.guid, cachePolicy: .networkOnly)
        #expect(offline.value == Note(text: "offline", count: 1))
        #expect(offline.metadata.version == 2)
        let edited = try await relaunched.fetch(Note.self, guid: existing.guid, cachePolicy: .networkOnly)
        #expect(edited.text == "v3")
        #expect(edited.metadata.version == 3, "the second update followed the first's version")
        #expect(try await restarted.count("Note") == 2)

        // Offline, each write was queued, and a try to deliver it only deferred it.
        var seen: [QueueEvent] = []
        for await event in events {
            if case .deferred(_, _, let reachable) = event {
                #expect(!reachable)
                continue
            }
            seen.append(event)
            if seen.count == 5 { break }
        }
        #expect(seen.allSatisfy { if case .queued = $0 { true } else { false } })
    }

    @Test func aCreateWhoseReplyWasLostStaysQueuedWithItsKey() async throws {
        let server = try await makeServer()
        let transport = LossyTransport(port: server.port) { request in request.method == "POST" }
        let client = try makeClient(port: server.port, transport: transport)
        let outcome = try await client.create(Note(text: "once"), policy: .queueWhenOffline)
        guard case .queued(let operation) = outcome else {
            Issue.record("the lost reply was taken as delivered")
            return
        }
        #expect(try await server.count("Note") == 1, "the server did run it")
        // What the queue will resend is answered from the server's record, not run again.
        let replay = try await server.client.send(
            "POST", "/ff/resources/Note", json: String(decoding: try #require(operation.body), as: UTF8.self),
            headers: [("Idempotency-Key", operation.id)])
        #expect(replay.status == 201)
        #expect(replay.header("Idempotent-Replayed") == "true")
        #expect(replay.json["guid"] as? String == outcome.guid)
        #expect(try await server.count("Note") == 1)
    }

    @Test func lostRepliesAreResentWithTheirKeysAndLandOnce() async throws {
        let server = try await makeServer()
        let lossy = LossyTransport(port: server.port) { request in request.method != "GET" }
        let storage = TestServer.makeTemporaryDirectory()
        let client = try makeClient(port: server.port, storage: storage, transport: lossy)
        let note = try await client.create(Note(text: "once"), policy: .queueWhenOffline)
        _ = try await client.patch(Note.self, guid: note.guid, ["count": 5], policy: .queueWhenOffline)
        // Each write first resends what is ahead of it: the create went out twice, its reply
        // lost both times, and the patch never went out behind it.
        #expect(lossy.lostCount == 2)
        #expect(await client.pendingOperations.map(\.kind) == [.create, .patch])
        await client.close()

        let relaunched = try makeClient(port: server.port, storage: storage)
        #expect(await relaunched.flush() == FlushResult(delivered: 2, failed: 0, state: .idle))
        let stored = try await relaunched.fetch(Note.self, guid: note.guid, cachePolicy: .networkOnly)
        #expect(stored.value == Note(text: "once", count: 5))
        #expect(stored.metadata.version == 2, "created once, patched once")
        #expect(try await server.count("Note") == 1)
    }

    @Test func aConflictOnAResentCreateIsConfirmedByReading() async throws {
        // The server's idempotency record can be gone (a crash between commit and record, or a
        // day later): the create then answers 409, and the SDK checks the object is its own.
        let server = try await makeServer()
        let client = try makeClient(port: server.port)
        try await client.register(userName: "gus", password: "correct horse")
        let storage = TestServer.makeTemporaryDirectory()
        let lossy = LossyTransport(port: server.port) {
            $0.method == "POST" && $0.path.hasPrefix("/ff/resources")
        }
        let credential = InMemoryCredentialStore()
        let queued = try makeClient(
            port: server.port, storage: storage, transport: lossy, credentials: credential)
        try await queued.login(userName: "gus", password: "correct horse")
        let outcome = try await queued.create(Note(text: "mine"), policy: .queueWhenOffline)
        #expect(await queued.pendingOperations.count == 1)
        // Forget the key on the server, as after its expiry.
        try await forgetIdempotencyKeys(of: server)
        let reliable = try makeClient(port: server.port, storage: storage, credentials: credential)
        await queued.close()
        #expect(await reliable.flush() == FlushResult(delivered: 1, failed: 0, state: .idle))
        #expect(try await server.count("Note") == 1)
        #expect(try await reliable.fetch(Note.self, guid: outcome.guid).text == "mine")
    }

    @Test func queuedWritesWaitForTheirOwnersLogin() async throws {
        let server = try await makeServer()
        let port = server.port
        let client = try makeClient(port: port)
        try await client.register(userName: "hal", password: "correct horse")
        await server.stop()
        _ = try await client.create(Note(text: "hal's"), policy: .queueWhenOffline)
        _ = try await client.logout()
        let restarted = try await makeServer(port: port, dataDirectory: server.dataDirectory)
        let events = await client.queueEvents()
        #expect(await client.flush().state == .waitingForLogin)
        try await client.register(userName: "ivy", password: "correct horse")
        #expect(await client.flush().state == .waitingForLogin, "not sent with another user's token")
        try await client.logout()
        try await client.login(userName: "hal", password: "correct horse")
        #expect(await client.flush() == FlushResult(delivered: 1, failed: 0, state: .idle))
        let items = try await restarted.items("Note")
        #expect(items.count == 1)
        #expect(items.first?["createdBy"] as? String == (await client.currentUser?.guid))
        var iterator = events.makeAsyncIterator()
        if case .waitingForLogin(let operation)? = await iterator.next() {
            #expect(operation.kind == .create)
        } else {
            Issue.record("no waitingForLogin event")
        }
    }

    @Test func aRefusedWriteIsDroppedWithAFailureEvent() async throws {
        let server = try await makeServer()
        let client = try makeClient(port: server.port)
        let events = await client.queueEvents()
        do {
            _ = try await client.patch(Note.self, guid: "missing", ["a": 1], policy: .queueWhenOffline)
            Issue.record("a patch of a missing object succeeded")
        } catch let error as RoostError {
            #expect(error.status == 404)
        }
        #expect(await client.pendingOperations.isEmpty)
        var iterator = events.makeAsyncIterator()
        if case .failed(let operation, let error)? = await iterator.next() {
            #expect(operation.guid == "missing")
            #expect(error.code == "not_found")
        } else {
            Issue.record("no failed event")
        }
    }

    @Test func backgroundDeliveryRetriesUntilTheServerIsBack() async throws {
        let server = try await makeServer()
        let port = server.port
        await server.stop()
        let client = try makeClient(port: port, background: true)
        let events = await client.queueEvents()
        _ = try await client.create(Note(text: "eventually"), policy: .queueWhenOffline)
        var iterator = events.makeAsyncIterator()
        var deferred: (retryAfter: TimeInterval, reachable: Bool)?
        while deferred == nil, let event = await iterator.next() {
            if case .deferred(_, let retryAfter, let reachable) = event { deferred = (retryAfter, reachable) }
        }
        #expect(deferred?.reachable == false)
        #expect((deferred?.retryAfter ?? 0) > 0)
        #expect(await client.pendingOperations.count == 1)
        let restarted = try await makeServer(port: port, dataDirectory: server.dataDirectory)
        var sent = false
        while let event = await iterator.next() {
            if case .sent(_, let status) = event {
                #expect(status == 201)
                sent = true
                break
            }
        }
        #expect(sent)
        #expect(try await restarted.count("Note") == 1)
        await client.close()
    }
}
