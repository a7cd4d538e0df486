import Foundation
import RoostTestSupport
import Testing

@testable import RoostHTTP

@Suite("Streamed responses: batched writes")
struct StreamWriteBatchTests {
    @Test(
        "writes gathered in a batch reach each stream in order once flushed; a finish in it ends its stream after them"
    )
    func batchedWrites() async throws {
        let server = try StreamingServer()
        let (first, _) = try await server.open()
        let (second, _) = try await server.open()
        let streams = [try #require(await server.stream(0)), try #require(await server.stream(1))]
        _ = try await read(first, until: "first\n")
        _ = try await read(second, until: "first\n")
        let batch = StreamWriteBatch()
        for round in 1...3 {
            for (index, stream) in streams.enumerated() {
                let outcome = stream.send(
                    Array("\(index)-\(round)\n".utf8), farewell: [], batch: batch, unlessBackedUp: true)
                #expect(outcome == .queued)
            }
        }
        streams[0].finish(Array("end\n".utf8), batch: batch)
        // Finished, it takes nothing more, though its farewell has not been written yet.
        #expect(streams[0].send([1], farewell: [], batch: batch) == .ended)
        batch.flush()
        #expect(try await read(first, until: "end\n") == "0-1\n0-2\n0-3\nend\n")
        #expect(await first.closed(within: 5))
        #expect(streams[0].isEnded)
        #expect(try await read(second, until: "1-3\n") == "1-1\n1-2\n1-3\n")
        #expect(!streams[1].isEnded)
        await server.server.shutdown()
    }

    @Test(
        "a piece sent on its own never overtakes batched pieces still waiting for the loop, however many streams"
    )
    func directSendsKeepTheirPlace() async throws {
        let server = try StreamingServer()
        // More streams than one job of the loop writes, so the last ones wait for a later job.
        let count = StreamWriteQueue.chunk * 2 + 1
        var connections: [RawConnection] = []
        var streams: [ResponseStream] = []
        for index in 0..<count {
            connections.append(try await server.open().0)
            streams.append(try #require(await server.stream(index)))
        }
        for connection in connections { _ = try await read(connection, until: "first\n") }
        let batch = StreamWriteBatch()
        for stream in streams {
            #expect(stream.send(Array("batched\n".utf8), farewell: [], batch: batch) == .queued)
        }
        batch.flush()
        #expect(streams[count - 1].send(Array("alone\n".utf8), farewell: []) == .queued)
        streams[count - 1].finish(Array("end\n".utf8))
        #expect(try await read(connections[count - 1], until: "end\n") == "batched\nalone\nend\n")
        #expect(try await read(connections[0], until: "batched\n") == "batched\n")
        await server.server.shutdown()
    }

    @Test("a send unless backed up queues nothing once half the limit waits, and says so")
    func unlessBackedUp() {
        // Not yet taken by a connection: what it is sent waits, and counts against the limit.
        let stream = ResponseStream(bufferLimit: 100)
        #expect(stream.send([UInt8](repeating: 65, count: 49), farewell: [], unlessBackedUp: true) == .queued)
        #expect(!stream.isBackedUp)
        #expect(stream.send([66], farewell: [], unlessBackedUp: true) == .queued)
        #expect(stream.isBackedUp)
        #expect(stream.send([67], farewell: [], unlessBackedUp: true) == .backedUp)
        // Without the condition it still queues (under the limit), as before.
        #expect(stream.send([68], farewell: []) == .queued)
        stream.end()
        #expect(stream.send([69], farewell: [], unlessBackedUp: true) == .ended)
    }
}
