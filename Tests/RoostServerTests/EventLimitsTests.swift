import Foundation
import RoostCore
import RoostServer
import RoostTestSupport
import Testing

@Suite("Realtime events: limits, revocation, slow readers, shutdown")
struct EventLimitsTests {
    @Test("bad subscriptions and positions are refused with their error")
    func refusals() async throws {
        let server = try await makeEventServer { $0.subscriptionsPerStream = 2 }
        let cases: [(String, [(String, String)], Int, String)] = [
            ("", [], 400, "invalid_parameter"),
            ("guid=abc", [], 400, "invalid_parameter"),
            ("collection=" + encoded("no way"), [], 400, "invalid_collection"),
            ("collection=Post&query=" + encoded("(n gt"), [], 400, "invalid_query"),
            ("collection=Post&query=" + encoded("(guid eq random(guid))"), [], 400, "invalid_query"),
            ("subscribe=A&subscribe=B&subscribe=C", [], 400, "too_many_subscriptions"),
            ("collection=Post&since=-1", [], 400, "invalid_parameter"),
            ("collection=Post", [("Last-Event-ID", "x")], 400, "invalid_parameter"),
            ("collection=Post", [("X-Token", "not-a-token")], 401, "invalid_token"),
        ]
        for (query, headers, status, code) in cases {
            let reader = try await subscribe(server, query, headers: headers)
            #expect(reader.status == status, "\(query)")
            #expect(reader.response.json["code"] as? String == code, "\(query): \(reader.response.text)")
        }
        #expect(server.application.changeFeed.streamCount == 0)
        await server.stop()
    }

    @Test("streams per user and in all are bounded; a closed stream frees its place")
    func streamLimits() async throws {
        let server = try await makeEventServer { limits in
            limits.streamsPerUser = 2
            limits.streams = 3
        }
        let first = try await subscribe(server, "collection=Post")
        let second = try await subscribe(server, "collection=Post")
        let third = try await subscribe(server, "collection=Post")
        #expect(third.status == 429 && third.response.json["code"] as? String == "too_many_streams")
        #expect((third.response.json["details"] as? [String: Any])?["limit"] as? Int == 2)
        first.connection.hangUp()
        #expect(await eventually { server.application.changeFeed.streamCount == 1 })
        let again = try await subscribe(server, "collection=Post")
        #expect(again.status == 200)
        let metrics = try await server.client.send("GET", "/metrics")
        #expect(metrics.text.contains("\nroost_event_streams 2\n"))
        // A logged-in user counts apart from the anonymous address, but all count in the total.
        _ = try await server.client.register("ann")
        let token = try await server.client.login("ann", password: "correct horse")
        let full = try await subscribe(server, "collection=Post", headers: [("X-Token", token)])
        #expect(full.status == 200)
        let over = try await subscribe(server, "collection=Post", headers: [("X-Token", token)])
        #expect(over.status == 503 && over.response.json["code"] as? String == "server_busy")
        _ = second
        await server.stop()
    }

    @Test("one address holds a bounded number of streams, however many accounts it registers")
    func streamsPerClientAddress() async throws {
        let server = try await makeEventServer { limits in
            limits.streamsPerUser = 2
            limits.streamsPerClient = 3
        }
        var tokens: [String] = []
        for name in ["ann", "bob"] {
            _ = try await server.client.register(name)
            tokens.append(try await server.client.login(name, password: "correct horse"))
        }
        let anonymous = try await subscribe(server, "collection=Post")
        let ann = try await subscribe(server, "collection=Post", headers: [("X-Token", tokens[0])])
        let annAgain = try await subscribe(server, "collection=Post", headers: [("X-Token", tokens[0])])
        #expect(anonymous.status == 200 && ann.status == 200 && annAgain.status == 200)
        // Bob is within his own limit, but the address holds its most.
        let bob = try await subscribe(server, "collection=Post", headers: [("X-Token", tokens[1])])
        #expect(bob.status == 429)
        #expect(bob.response.json["code"] as? String == "too_many_streams")
        let details = bob.response.json["details"] as? [String: Any]
        #expect(details?["limit"] as? Int == 3)
        #expect(details?["per"] as? String == "client")
        anonymous.connection.hangUp()
        #expect(await eventually { server.application.changeFeed.streamCount == 2 })
        let bobAgain = try await subscribe(server, "collection=Post", headers: [("X-Token", tokens[1])])
        #expect(bobAgain.status == 200)
        _ = (ann, annAgain)
        await server.stop()
    }

    @Test("revoking the token, or deactivating the user, closes the stream")
    func revocationCloses() async throws {
        let world = try await PermissionWorld.make()
        let server = world.server
        let alice = try await subscribe(server, "subscribe=Acronym", headers: world.headers(.owner))
        let bob = try await subscribe(server, "subscribe=Acronym", headers: world.headers(.other))
        #expect(try await world.send(.owner, "POST", "/ff/logout").json["loggedOut"] as? Bool == true)
        #expect(try await alice.readToEnd().isEmpty)
        #expect(alice.comments.contains { $0.contains("revoked") })
        let deactivated = try await world.send(
            .admin, "PATCH", "/ff/resources/FFUser/\(world.guids[.other]!)", json: #"{"active":false}"#)
        #expect(deactivated.status == 200, "\(deactivated.text)")
        _ = try await bob.readToEnd()
        // Deactivation revokes the user's tokens in the same transaction: the stream ends on
        // whichever the feed meets first, and says so.
        #expect(bob.ended)
        #expect(
            bob.comments.contains { $0.contains("no longer active") || $0.contains("token was revoked") },
            "\(bob.comments)")
        await server.stop()
    }

    @Test("a stream ends when its token expires")
    func expiryCloses() async throws {
        // The server's clock is the test's: the token expires when the test says, not when a
        // busy machine happens to get there.
        let clock = ManualWallClock()
        let server = try await TestServer { configuration in
            configuration.appDefinition = openRules
            configuration.passwordHasher = PasswordHasher.cheapForTests()
            configuration.clock = clock
            configuration.tokenLifetime = 60
            configuration.events.heartbeat = .milliseconds(100)
        }
        _ = try await server.client.register("ann")
        let token = try await server.client.login("ann", password: "correct horse")
        let reader = try await subscribe(server, "collection=Post", headers: [("X-Token", token)])
        #expect(reader.status == 200)
        clock.advance(seconds: 61)
        _ = try await reader.readToEnd()
        #expect(reader.ended && reader.comments.contains { $0.contains("expired") })
        await server.stop()
    }

    @Test("a client that does not read is cut off with its last delivered id, and resumes without loss")
    func slowReaderIsCutOff() async throws {
        let server = try await makeEventServer(
            { limits in
                limits.bufferedBytes = 64 * 1024
                limits.slowReaderTimeout = .seconds(3)
            },
            // The farewell waits behind what the client never read: under the suite's load the
            // creates below took over the default 60 s, which closed the stream without it.
            writeTimeout: 900)
        let slow = try await subscribe(server, "collection=Post")
        let text = String(repeating: "x", count: 20_000)
        var guids: [String] = []
        // Far more than the socket buffers and the stream's limit hold; once it is cut, no more.
        for _ in 0..<600 where server.application.changeFeed.streamCount > 0 {
            let created = try await server.client.send(
                "POST", "/ff/resources/Post", json: #"{"text":"\#(text)"}"#)
            guids.append(try #require(created.json["guid"] as? String))
        }
        #expect(await eventually { server.application.changeFeed.streamCount == 0 })
        let received = try await slow.readToEnd()
        let farewell = try #require(slow.comments.first { $0.contains("last delivered id") })
        let lastID = try #require(received.last?.id)
        #expect(farewell.hasSuffix("Last-Event-ID: \(lastID)"))
        #expect(received.count < guids.count)
        #expect(received.map(\.guid) == Array(guids.prefix(received.count)))
        // Resuming from the farewell's id loses nothing. Under a busy machine this reader can be
        // slow too and be cut again: it then resumes again from its new farewell, as a client would.
        var rest: [ServerSentEvent] = []
        var position = lastID
        for _ in 0..<20 where rest.count < guids.count - received.count {
            let resumed = try await subscribe(
                server, "collection=Post", headers: [("Last-Event-ID", position)])
            rest += try await resumed.next(guids.count - received.count - rest.count)
            guard let last = rest.last?.id else { break }
            position = last
        }
        #expect(rest.count == guids.count - received.count)
        #expect(rest.map(\.guid) == Array(guids.dropFirst(received.count)))
        await server.stop()
    }

    @Test("shutdown ends open streams cleanly, saying why")
    func shutdownEndsStreams() async throws {
        let server = try await makeEventServer()
        let reader = try await subscribe(server, "collection=Post")
        await server.stop()
        #expect(try await reader.readToEnd().isEmpty)
        #expect(reader.ended && reader.comments.contains { $0.contains("shutting down") })
    }

    @Test("a quiet stream gets heartbeats carrying its position")
    func heartbeats() async throws {
        let server = try await makeEventServer { $0.heartbeat = .milliseconds(200) }
        let reader = try await subscribe(server, "collection=Post")
        _ = try await server.client.send("POST", "/ff/resources/Other", json: "{}")
        #expect(try await reader.waitForComment(containing: "heartbeat"))
        // The id without data moves the client's position past the write it did not hear of.
        #expect(try await reader.waitForLastEventID("1"))
        await server.stop()
    }

    @Test("heartbeats never move a stream's id back behind an event it was already sent")
    func heartbeatsKeepIdsInOrder() async throws {
        let server = try await makeEventServer { $0.heartbeat = .milliseconds(1) }
        let reader = try await subscribe(server, "collection=Post")
        let writes = 400
        for _ in 0..<writes {
            #expect(try await server.client.send("POST", "/ff/resources/Post", json: "{}").status == 201)
        }
        #expect(try await reader.waitForLastEventID("\(writes)"))
        let ids = reader.receivedIDs.compactMap { Int64($0) }
        #expect(ids.count == reader.receivedIDs.count)
        // An id lower than one before it would make an EventSource resume from there: duplicates.
        let backwards = zip(ids, ids.dropFirst()).filter { $0.1 < $0.0 }
        #expect(backwards.isEmpty, "ids went back: \(backwards.prefix(5))")
        await server.stop()
    }
}

@Suite("Realtime events: membership and HEAD")
struct EventMembershipTests {
    @Test(
        "a user removed from a group is told to fetch again, and stops hearing of what the group let them read"
    )
    func groupRemovalApplies() async throws {
        let world = try await PermissionWorld.make()
        let server = world.server
        let carol = try await subscribe(
            server, "subscribe=Board&subscribe=Acronym", headers: world.headers(.member))
        let board = try await world.send(
            .owner, "POST", "/ff/resources/Board", json: #"{"readers":["editors"]}"#)
        let guid = try #require(board.json["guid"] as? String)
        #expect(try await carol.next()?.guid == guid)
        let removed = try await world.send(
            .admin, "PATCH", "/ff/resources/FFUserGroup/editors", json: #"{"users":[]}"#)
        #expect(removed.status == 200, "\(removed.text)")
        // No object changed, so no object can say `leave`: the stream says to fetch again.
        let reset = try #require(try await carol.next())
        #expect(reset.type == "reset")
        #expect(
            reset.json["reason"] as? String
                == "Your access changed (a group membership or a role was removed); fetch the data again.")
        _ = try await world.send(.owner, "PATCH", "/ff/resources/Board/\(guid)", json: #"{"title":"new"}"#)
        let marker = try await world.send(.owner, "POST", "/ff/resources/Acronym", json: #"{"a":"b"}"#)
        #expect(try await carol.next()?.guid == marker.json["guid"] as? String)
        await server.stop()
    }

    @Test("HEAD /ff/events answers the stream's head and opens no stream")
    func headOpensNothing() async throws {
        let server = try await makeEventServer()
        let response = try await offCooperativePool { () throws -> TestResponse in
            let connection = try RawConnection(port: server.port)
            connection.send("HEAD /ff/events?collection=Post HTTP/1.1\r\nHost: x\r\n\r\n")
            return try connection.readResponse(head: true)
        }
        #expect(
            response.status == 200 && response.header("Content-Type") == "text/event-stream; charset=utf-8")
        #expect(await eventually { server.application.changeFeed.streamCount == 0 })
        await server.stop()
    }
}
