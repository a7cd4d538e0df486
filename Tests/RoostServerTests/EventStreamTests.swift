import Foundation
import RoostCore
import RoostServer
import RoostStore
import RoostTestSupport
import Testing

@Suite("Realtime events")
struct EventStreamTests {
    @Test("create, update and delete reach a subscriber, each with its change-log position as id")
    func operationsReachSubscriber() async throws {
        let server = try await makeEventServer()
        let reader = try await subscribe(server, "collection=Post")
        #expect(reader.response.header("Content-Type") == "text/event-stream; charset=utf-8")
        #expect(reader.response.header("Cache-Control") == "no-store")
        #expect(reader.response.header("X-Accel-Buffering") == "no")
        #expect(reader.response.header("Content-Length") == nil)
        let created = try await server.client.send("POST", "/ff/resources/Post", json: #"{"text":"one"}"#)
        let guid = try #require(created.json["guid"] as? String)
        _ = try await server.client.send("POST", "/ff/resources/Other", json: #"{"text":"elsewhere"}"#)
        let patched = try await server.client.send(
            "PATCH", "/ff/resources/Post/\(guid)", json: #"{"text":"two"}"#)
        #expect(patched.status == 200)
        #expect(try await server.client.send("DELETE", "/ff/resources/Post/\(guid)").status == 204)
        let events = try await reader.next(3)
        #expect(events.map(\.type) == ["create", "update", "delete"])
        #expect(events.map(\.guid) == [guid, guid, guid])
        #expect(events[0].json["text"] as? String == "one")
        #expect(events[1].json["text"] as? String == "two" && events[1].json["version"] as? Int == 2)
        #expect(events[2].data == #"{"guid":"\#(guid)","ffUrl":"/ff/resources/Post/\#(guid)"}"#)
        let ids = events.compactMap { $0.id.flatMap { Int64($0) } }
        #expect(ids.count == 3 && ids == ids.sorted() && Set(ids).count == 3)
        await server.stop()
    }

    @Test("a document stored with line breaks arrives as several data lines that join back into it")
    func multilineDocument() async throws {
        let server = try await makeEventServer()
        let reader = try await subscribe(server, "collection=Post")
        let created = try await server.client.send(
            "POST", "/ff/resources/Post", json: "{\n  \"text\": \"a\",\r\n  \"n\": 1\n}")
        #expect(created.status == 201)
        let event = try #require(try await reader.next())
        #expect(event.json["text"] as? String == "a" && event.json["n"] as? Int == 1)
        await server.stop()
    }

    @Test("a query subscription hears enter and leave; a guid subscription hears only its object")
    func enterAndLeave() async throws {
        let server = try await makeEventServer()
        let query = try await subscribe(server, "collection=Post&query=" + encoded("(n gt 5)"))
        let created = try await server.client.send("POST", "/ff/resources/Post", json: #"{"n":1}"#)
        let guid = try #require(created.json["guid"] as? String)
        let single = try await subscribe(server, "subscribe=" + encoded("Post/\(guid)"))
        for n in [10, 11, 2] {
            _ = try await server.client.send("PATCH", "/ff/resources/Post/\(guid)", json: #"{"n":\#(n)}"#)
        }
        let other = try await server.client.send("POST", "/ff/resources/Post", json: #"{"n":7}"#)
        let otherGuid = try #require(other.json["guid"] as? String)
        _ = try await server.client.send("DELETE", "/ff/resources/Post/\(otherGuid)")
        _ = try await server.client.send("DELETE", "/ff/resources/Post/\(guid)")
        let heard = try await query.next(5)
        #expect(heard.map(\.type) == ["enter", "update", "leave", "create", "delete"])
        #expect(heard.map(\.guid) == [guid, guid, guid, otherGuid, otherGuid])
        #expect(heard[0].json["n"] as? Int == 10)
        let alone = try await single.next(4)
        #expect(alone.map(\.type) == ["update", "update", "update", "delete"])
        #expect(Set(alone.map(\.guid)) == [guid])
        await server.stop()
    }

    @Test("a caller without read access hears nothing of the object, and subscribing tells nothing")
    func unreadableObjectsStaySilent() async throws {
        let world = try await PermissionWorld.make()
        let server = world.server
        let bob = try await subscribe(
            server, "subscribe=Diary&subscribe=Acronym", headers: world.headers(.other))
        let alice = try await subscribe(server, "subscribe=Diary", headers: world.headers(.owner))
        let entry = try await world.send(.owner, "POST", "/ff/resources/Diary", json: #"{"text":"secret"}"#)
        let guid = try #require(entry.json["guid"] as? String)
        // The same answer for an object bob cannot read and for one that does not exist.
        let hidden = try await subscribe(
            server, "subscribe=" + encoded("Diary/\(guid)"), headers: world.headers(.other))
        let missing = try await subscribe(server, "subscribe=Diary/nothing", headers: world.headers(.other))
        #expect(hidden.status == 200 && missing.status == 200)
        _ = try await world.send(.owner, "PATCH", "/ff/resources/Diary/\(guid)", json: #"{"text":"more"}"#)
        _ = try await world.send(.owner, "DELETE", "/ff/resources/Diary/\(guid)")
        let marker = try await world.send(.owner, "POST", "/ff/resources/Acronym", json: #"{"a":"b"}"#)
        // Bob's first event is the public marker: nothing of the diary came before it.
        let first = try await bob.next()
        #expect(first?.type == "create" && first?.guid == marker.json["guid"] as? String)
        #expect(try await alice.next(3).map(\.type) == ["create", "update", "delete"])
        await server.stop()
    }

    @Test("owner-only fields are stripped for others, and a query on them matches only the caller's own")
    func ownerOnlyFieldsStripped() async throws {
        let world = try await PermissionWorld.make()
        let server = world.server
        let bob = try await subscribe(server, "subscribe=Profile", headers: world.headers(.other))
        let probe = try await subscribe(
            server, "subscribe=" + encoded("Profile/(secret eq 'x')") + "&subscribe=Acronym",
            headers: world.headers(.other))
        let alice = try await subscribe(server, "subscribe=Profile", headers: world.headers(.owner))
        _ = try await world.send(.owner, "POST", "/ff/resources/Profile", json: #"{"name":"A","secret":"x"}"#)
        _ = try await world.send(.owner, "POST", "/ff/resources/Acronym", json: #"{"a":"b"}"#)
        let seen = try #require(try await bob.next())
        #expect(seen.json["name"] as? String == "A" && seen.json["secret"] == nil)
        #expect(try await alice.next()?.json["secret"] as? String == "x")
        #expect(try await probe.next()?.json["a"] as? String == "b")
        await server.stop()
    }

    @Test("Last-Event-ID resumes with exactly the missed events, in order; ?since= too")
    func resumeAfterDisconnect() async throws {
        let server = try await makeEventServer()
        let first = try await subscribe(server, "collection=Post")
        _ = try await server.client.send("POST", "/ff/resources/Post", json: #"{"n":0}"#)
        let seen = try #require(try await first.next()?.id)
        first.connection.hangUp()
        var guids: [String] = []
        for n in 1...100 {
            let created = try await server.client.send("POST", "/ff/resources/Post", json: #"{"n":\#(n)}"#)
            guids.append(try #require(created.json["guid"] as? String))
        }
        let resumed = try await subscribe(server, "collection=Post", headers: [("Last-Event-ID", seen)])
        let replayed = try await resumed.next(100)
        #expect(replayed.map(\.guid) == guids)
        let ids = replayed.compactMap { $0.id.flatMap { Int64($0) } }
        #expect(ids.count == 100 && ids == ids.sorted() && Set(ids).count == 100 && ids[0] > Int64(seen)!)
        // Live events follow the replay, with no duplicate.
        let live = try await server.client.send("POST", "/ff/resources/Post", json: #"{"n":101}"#)
        #expect(try await resumed.next()?.guid == live.json["guid"] as? String)
        let since = try await subscribe(server, "collection=Post&since=\(ids[97])")
        #expect(try await since.next(3).map(\.guid) == [guids[98], guids[99], live.json["guid"] as? String])
        await server.stop()
    }

    @Test("a position older than the log's window, or beyond its end, gets one reset event")
    func tooOldPositionResets() async throws {
        let server = try await makeEventServer { limits in
            limits.retention = ChangeRetention(age: .zero, entries: 5)
            // The feed's own trim runs once at start (under load, perhaps after some writes), then
            // not again during the test.
            limits.trimInterval = .seconds(3600)
        }
        for n in 1...20 {
            _ = try await server.client.send("POST", "/ff/resources/Post", json: #"{"n":\#(n)}"#)
        }
        // Whichever trim ran when, 1...15 are gone and 16...20 stay: the resets below say so.
        #expect(await server.application.changeFeed.trimLog() <= 15)
        for (position, last) in [("1", 20), ("999", 21)] {
            let reader = try await subscribe(server, "collection=Post&since=\(position)")
            let reset = try #require(try await reader.next())
            #expect(reset.type == "reset" && reset.id == "\(last)" && reset.json["last"] as? Int == last)
            let next = try await server.client.send("POST", "/ff/resources/Post", json: #"{"n":0}"#)
            #expect(try await reader.next()?.guid == next.json["guid"] as? String)
        }
        let within = try await subscribe(server, "collection=Post&since=16")
        #expect(try await within.next()?.id == "17")
        await server.stop()
    }
}
