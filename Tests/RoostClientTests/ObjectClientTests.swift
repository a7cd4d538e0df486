import Foundation
import RoostClient
import RoostTestSupport
import Testing

/// Objects, references and queries through the SDK against a real server.
@Suite struct ObjectClientTests {
    @Test func createReadUpdatePatchDelete() async throws {
        let server = try await makeServer()
        let client = try makeClient(port: server.port)
        let created = try await client.create(Note(text: "first", count: 1))
        #expect(created.value == Note(text: "first", count: 1))
        #expect(created.metadata.version == 1)
        #expect(created.metadata.ffUrl == "/ff/resources/Note/\(created.guid)")
        #expect(created.metadata.createdBy == nil)

        var edited = try await client.fetch(Note.self, guid: created.guid)
        #expect(edited.text == "first")
        edited.text = "second"
        let updated = try await client.update(edited)
        #expect(updated.metadata.version == 2)
        #expect(updated.value == Note(text: "second", count: 1))

        // The copy read before the update is stale: If-Match refuses it.
        do {
            _ = try await client.update(edited)
            Issue.record("a stale update was accepted")
        } catch let error as RoostError {
            #expect(error.status == 412)
        }

        let patched = try await client.patch(Note.self, guid: created.guid, ["count": nil, "extra": "x"])
        #expect(patched.value == Note(text: "second", count: nil))
        #expect(patched.metadata.version == 3)
        let raw = try await server.client.send("GET", "/ff/resources/Note/\(created.guid)")
        #expect(raw.json["extra"] as? String == "x")
        #expect(raw.json["count"] == nil)

        #expect(try await client.delete(patched) == .deleted)
        do {
            _ = try await client.fetch(Note.self, guid: created.guid)
            Issue.record("a deleted object was found")
        } catch let error as RoostError {
            #expect(error.status == 404)
            #expect(error.code == "not_found")
        }
    }

    @Test func aChosenGuidAndAModelThatDoesNotDecode() async throws {
        let server = try await makeServer()
        let client = try makeClient(port: server.port)
        let note = try await client.create(Note(text: "x"), guid: "my-guid-1")
        #expect(note.guid == "my-guid-1")
        _ = try await server.client.send("POST", "/ff/resources/Note", json: #"{"guid":"odd","text":5}"#)
        do {
            _ = try await client.fetch(Note.self, guid: "odd")
            Issue.record("a number decoded as a string")
        } catch let error as RoostError {
            #expect(error.code == "decoding_failed")
            #expect(error.status == nil)
            #expect(error.message.contains("'text'"))
        }
    }

    @Test func referencesAreStoredAsURLsAndInlinedOnRequest() async throws {
        let server = try await makeServer()
        let client = try makeClient(port: server.port)
        let user = try await client.register(userName: "erin", password: "correct horse")
        let post = try await client.create(Micropost(text: "hi", user: Ref(guid: user.guid)))
        let raw = try await server.client.send("GET", "/ff/resources/Micropost/\(post.guid)")
        #expect((raw.json["user"] as? [String: Any])?.keys.sorted() == ["ffUrl"])
        #expect(
            (raw.json["user"] as? [String: Any])?["ffUrl"] as? String == "/ff/resources/FFUser/\(user.guid)")

        let plain = try await client.fetch(Micropost.self, guid: post.guid)
        #expect(plain.user.object == nil)
        #expect(plain.user.guid == user.guid)
        let inlined = try await client.fetch(Micropost.self, guid: post.guid, depthRef: 1)
        #expect(inlined.user.object?.userName == "erin")
        #expect(inlined.user.object?.metadata.guid == user.guid)
        #expect(try await client.fetch(plain.user).userName == "erin")

        let feed = try await client.query(Micropost.self).where("user.userName", .eq, "erin").inlining(
            depth: 1
        )
        .all()
        #expect(feed.map(\.text) == ["hi"])
        #expect(feed.first?.user.object?.userName == "erin")
    }

    @Test func queriesEscapeValuesAndPickAtRandom() async throws {
        let server = try await makeServer()
        let client = try makeClient(port: server.port)
        let names = ["O'Brien", "Smith", "x') or (gender ne '", "Jones"]
        for (index, name) in names.enumerated() {
            _ = try await client.create(Celebrity(name: name, gender: index % 2 == 0 ? "male" : "female"))
        }
        #expect(
            try await client.query(Celebrity.self).where("name", .eq, "O'Brien").all().map(\.name) == [
                "O'Brien"
            ])
        let injected = try await client.query(Celebrity.self).where("name", .eq, QueryValue(names[2])).all()
        #expect(injected.map(\.name) == [names[2]])
        #expect(try await client.query(Celebrity.self).where("name", .eq, "Nobody").all().isEmpty)
        #expect(try await client.query(Celebrity.self).where("name", .eq, "Nobody").first() == nil)

        let sorted = try await client.query(Celebrity.self).where("gender", .eq, "female").sorted(by: "name")
            .all()
        #expect(sorted.map(\.name) == ["Jones", "Smith"])

        // WouldYa: two distinct random picks of one gender.
        for _ in 0..<20 {
            let left = try #require(
                try await client.query(Celebrity.self).where("gender", .eq, "male").random())
            let right = try #require(
                try await client.query(Celebrity.self).where("gender", .eq, "male").and(
                    "guid", .ne, QueryValue(left.guid)
                ).random())
            #expect(left.gender == "male" && right.gender == "male")
            #expect(left.guid != right.guid)
        }
        #expect(try await client.query(Celebrity.self).where("gender", .eq, "other").random() == nil)
    }

    @Test func pagesComeAsAnAsyncSequence() async throws {
        let server = try await makeServer()
        let client = try makeClient(port: server.port)
        for index in 0..<25 { _ = try await client.create(Note(text: "n", count: index)) }
        var sizes: [Int] = []
        var counts: [Int] = []
        for try await page in client.query(Note.self).sorted(by: "count").pages(size: 10) {
            sizes.append(page.count)
            counts += page.compactMap(\.count)
        }
        #expect(sizes == [10, 10, 5])
        #expect(counts == Array(0..<25))
        #expect(try await client.list(Note.self, start: 20, count: 10).count == 5)
        #expect(try await client.query(Note.self).all().count == 25)
    }
}
