import Foundation
import RoostTestSupport
import Testing

@Suite("References and depthRef")
struct ReferenceTests {
    @Test("seed 000: a Micropost refers to its FFUser, inlined with depthRef=1")
    func micropostAuthor() async throws {
        let clock = ManualWallClock()
        let server = try await makeAccountServer(clock: clock)
        let registered = try await server.client.register("alice")
        let token = try #require(registered.json["token"] as? String)
        let userGuid = try #require((registered.json["user"] as? [String: Any])?["guid"] as? String)
        for text in ["first", "second"] {
            clock.advance(seconds: 1)
            let created = try await server.client.send(
                "POST", "/ff/resources/Micropost",
                json: #"{"content":"\#(text)","user":{"ffUrl":"/ff/resources/FFUser/\#(userGuid)"}}"#,
                headers: [("X-Token", token)])
            #expect(created.status == 201)
        }
        let plain = try await server.client.send("GET", "/ff/resources/Micropost")
        let plainItems = plain.json["items"] as? [[String: Any]] ?? []
        #expect(plainItems.map { ($0["user"] as? [String: Any])?.count } == [1, 1])

        // Users are readable only when logged in, so an anonymous reader gets the bare references.
        let anonymous = try await server.client.send("GET", "/ff/resources/Micropost?depthRef=1")
        #expect(
            (anonymous.json["items"] as? [[String: Any]] ?? []).map { ($0["user"] as? [String: Any])?.count }
                == [1, 1])
        let inlined = try await server.client.send(
            "GET", "/ff/resources/Micropost?depthRef=1&sort=createdAt%20desc", headers: [("X-Token", token)])
        let items = inlined.json["items"] as? [[String: Any]] ?? []
        #expect(items.map { $0["content"] as? String } == ["second", "first"])
        #expect(items.allSatisfy { ($0["user"] as? [String: Any])?["userName"] as? String == "alice" })

        let query = try await server.client.send(
            "GET", "/ff/resources/Micropost/" + encodeQuery("(content eq 'first')") + "?depthRef=1",
            headers: [("X-Token", token)])
        #expect(
            ((query.json["items"] as? [[String: Any]])?.first?["user"] as? [String: Any])?["userName"]
                as? String == "alice")

        let bad = try await server.client.send("GET", "/ff/resources/Micropost?depthRef=4")
        #expect(bad.status == 400)
        #expect(bad.json["code"] as? String == "invalid_parameter")
        await server.stop()
    }

    @Test("cycles stop, missing targets stay references, depth is honoured")
    func cyclesAndDepth() async throws {
        let server = try await makeOpenServer()
        let client = server.client
        _ = try await client.send(
            "POST", "/ff/resources/Node", json: #"{"guid":"a","next":{"ffUrl":"/ff/resources/Node/b"}}"#)
        _ = try await client.send(
            "POST", "/ff/resources/Node",
            json:
                #"{"guid":"b","next":{"ffUrl":"/ff/resources/Node/c"},"lost":{"ffUrl":"/ff/resources/Node/gone"}}"#
        )
        _ = try await client.send(
            "POST", "/ff/resources/Node",
            json:
                #"{"guid":"c","next":{"ffUrl":"/ff/resources/Node/a"},"items":[{"ffUrl":"/ff/resources/Node/b"}]}"#
        )

        let one = try await client.send("GET", "/ff/resources/Node/a?depthRef=1")
        let b = one.json["next"] as? [String: Any] ?? [:]
        #expect(b["guid"] as? String == "b")
        #expect((b["next"] as? [String: Any])?.keys.sorted() == ["ffUrl"])
        // Inlined objects change on their own: the tag is a digest of the answer, not a version.
        let tag = try #require(one.header("ETag"))
        #expect(tag.hasPrefix("W/\""))
        #expect(
            try await client.send("GET", "/ff/resources/Node/a?depthRef=1", headers: [("If-None-Match", tag)])
                .status
                == 304)

        let three = try await client.send("GET", "/ff/resources/Node/a?depthRef=3")
        let b3 = three.json["next"] as? [String: Any] ?? [:]
        let c3 = b3["next"] as? [String: Any] ?? [:]
        #expect(c3["guid"] as? String == "c")
        // c points back at a and at b, which enclose it: both stay references.
        #expect(c3["next"] as? [String: String] == ["ffUrl": "/ff/resources/Node/a"])
        #expect((c3["items"] as? [[String: String]]) == [["ffUrl": "/ff/resources/Node/b"]])
        #expect(b3["lost"] as? [String: String] == ["ffUrl": "/ff/resources/Node/gone"])
        await server.stop()
    }
}

@Suite("Traversal and BackReferences")
struct TraversalTests {
    @Test("(query)/member answers the referenced objects; BackReferences lists who points here")
    func traversal() async throws {
        let server = try await makeAccountServer()
        var users: [String: (guid: String, token: String)] = [:]
        for name in ["alice", "bob"] {
            let registered = try await server.client.register(name)
            users[name] = (
                try #require((registered.json["user"] as? [String: Any])?["guid"] as? String),
                try #require(registered.json["token"] as? String)
            )
        }
        for (name, text) in [("alice", "hello"), ("alice", "again"), ("bob", "hi/there")] {
            let author = users[name]!
            let created = try await server.client.send(
                "POST", "/ff/resources/Micropost",
                json: #"{"content":"\#(text)","user":{"ffUrl":"/ff/resources/FFUser/\#(author.guid)"}}"#,
                headers: [("X-Token", author.token)])
            #expect(created.status == 201)
        }
        func names(_ response: TestResponse) -> [String] {
            (response.json["items"] as? [[String: Any]] ?? []).compactMap { $0["userName"] as? String }
        }
        let reader = [("X-Token", users["alice"]!.token)]
        let authors = try await server.client.send(
            "GET", "/ff/resources/Micropost/" + encodeQuery("(content ne 'x')") + "/user", headers: reader)
        #expect(authors.status == 200)
        #expect(names(authors) == ["alice", "bob"])
        let slashy = try await server.client.send(
            "GET", "/ff/resources/Micropost/" + encodeQuery("(content eq 'hi/there')") + "/user",
            headers: reader)
        #expect(names(slashy) == ["bob"])
        // A '/' inside a query string is not a traversal.
        let plain = try await server.client.send("GET", "/ff/resources/Micropost/(content%20eq%20'hi/there')")
        #expect((plain.json["items"] as? [[String: Any]])?.first?["content"] as? String == "hi/there")

        let back = try await server.client.send(
            "GET", "/ff/resources/FFUser/\(users["alice"]!.guid)/BackReferences.Micropost.user?sort=content")
        #expect(
            (back.json["items"] as? [[String: Any]] ?? []).compactMap { $0["content"] as? String } == [
                "again", "hello",
            ])
        let none = try await server.client.send(
            "GET", "/ff/resources/FFUser/nobody/BackReferences.Micropost.user")
        #expect(none.text == #"{"items":[]}"#)
        let bad = try await server.client.send(
            "GET", "/ff/resources/FFUser/\(users["alice"]!.guid)/Backwards")
        #expect(bad.status == 404)
        await server.stop()
    }
}
