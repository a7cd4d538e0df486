import Foundation
import RoostCore
import RoostTestSupport
import Testing

@Suite("Realtime events: fan-out to many streams")
struct EventFanOutPressureTests {
    @Test(
        "many streams (more than one hand-off to the loops) each get every event in order, while a slow reader among them is cut off"
    )
    func manyStreamsAndASlowReader() async throws {
        let server = try await makeEventServer { limits in
            limits.streamsPerUser = 400
            limits.streamsPerClient = 400
            limits.streams = 400
            limits.bufferedBytes = 64 * 1024
            limits.slowReaderTimeout = .seconds(1)
        }
        // More than a flush's worth of sends, spread over the server's two loops.
        let count = 300
        var readers: [EventStreamReader] = []
        for _ in 0..<count { readers.append(try await subscribe(server, "collection=Post")) }
        let slow = try await subscribe(server, "collection=Big")
        var posts: [String] = []
        func post() async throws {
            let created = try await server.client.send("POST", "/ff/resources/Post", json: #"{"n":1}"#)
            posts.append(try #require(created.json["guid"] as? String))
        }
        try await post()
        try await post()
        // Far more than the slow reader's limit and its socket buffers hold.
        let text = String(repeating: "x", count: 20_000)
        for _ in 0..<600 {
            let created = try await server.client.send(
                "POST", "/ff/resources/Big", json: #"{"text":"\#(text)"}"#)
            #expect(created.status == 201)
        }
        try await post()
        #expect(await eventually { server.application.changeFeed.streamCount == count })
        let received = try await slow.readToEnd()
        let lastID = try #require(received.last?.id)
        #expect(slow.comments.contains { $0.hasSuffix("Last-Event-ID: \(lastID)") })
        for reader in readers {
            let events = try await reader.next(posts.count)
            #expect(events.map(\.guid) == posts)
            #expect(events.map(\.type) == ["create", "create", "create"])
            let ids = events.compactMap { $0.id.flatMap { Int($0) } }
            #expect(ids == ids.sorted() && Set(ids).count == posts.count)
        }
        await server.stop()
    }
}
