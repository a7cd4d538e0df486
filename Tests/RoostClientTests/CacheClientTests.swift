import Foundation
import RoostClient
import RoostTestSupport
import Testing

/// The disk cache, counted on the server: a revalidated read is a 304 without a body.
@Suite struct CacheClientTests {
    let objectRoute = "/ff/resources/:collection/:guid"
    let listRoute = "/ff/resources/:collection"

    @Test func revalidationCostsA304() async throws {
        let server = try await makeServer()
        let created = try await server.client.send("POST", "/ff/resources/Note", json: #"{"text":"a"}"#)
        let guid = try #require(created.json["guid"] as? String)
        let client = try makeClient(port: server.port)

        for _ in 0..<3 { #expect(try await client.fetch(Note.self, guid: guid).text == "a") }
        #expect(try await server.answered(route: objectRoute, status: 200) == 1)
        #expect(try await server.answered(route: objectRoute, status: 304) == 2)

        // Changed on the server: the next read gets the new body.
        _ = try await server.client.send("PATCH", "/ff/resources/Note/\(guid)", json: #"{"text":"b"}"#)
        #expect(try await client.fetch(Note.self, guid: guid).text == "b")
        #expect(try await server.answered(route: objectRoute, status: 200) == 3, "the PATCH and the new body")

        // cacheElseNetwork does not ask at all; networkOnly always gets the body.
        #expect(try await client.fetch(Note.self, guid: guid, cachePolicy: .cacheElseNetwork).text == "b")
        #expect(try await client.fetch(Note.self, guid: guid, cachePolicy: .networkOnly).text == "b")
        #expect(try await server.answered(route: objectRoute, status: 200) == 4)
        #expect(try await server.answered(route: objectRoute, status: 304) == 2)

        // Query results revalidate the same way.
        for _ in 0..<2 { #expect(try await client.query(Note.self).all().count == 1) }
        #expect(try await server.answered(route: listRoute, status: 200) == 1)
        #expect(try await server.answered(route: listRoute, status: 304) == 1)
    }

    @Test func aWriteRefreshesTheCachedCopy() async throws {
        let server = try await makeServer()
        let client = try makeClient(port: server.port)
        var note = try await client.create(Note(text: "a"))
        note.text = "b"
        _ = try await client.update(note)
        #expect(try await client.fetch(Note.self, guid: note.guid).text == "b")
        #expect(try await server.answered(route: objectRoute, status: 200) == 1, "only the PUT")
        #expect(try await server.answered(route: objectRoute, status: 304) == 1)
    }

    @Test func offlineReadsComeFromTheCacheAndLogoutClearsIt() async throws {
        let server = try await makeServer()
        let client = try makeClient(port: server.port)
        try await client.register(userName: "fay", password: "correct horse")
        let note = try await client.create(Note(text: "kept"))
        _ = try await client.query(Note.self).all()
        await server.stop()

        #expect(try await client.fetch(Note.self, guid: note.guid).text == "kept")
        #expect(try await client.query(Note.self).all().map(\.text) == ["kept"])
        do {
            _ = try await client.fetch(Note.self, guid: note.guid, cachePolicy: .networkOnly)
            Issue.record("networkOnly answered from the cache")
        } catch let error as RoostError {
            #expect(error.code == "network_unreachable")
            #expect(error.status == nil)
        }
        try await client.logout()
        do {
            _ = try await client.fetch(Note.self, guid: note.guid)
            Issue.record("the cache outlived the logout")
        } catch let error as RoostError {
            #expect(error.code == "network_unreachable")
        }
    }
}
