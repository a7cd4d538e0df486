import Foundation
import RoostClient
import Testing

/// `pages(size:)` asks the server for a page only when the loop asks for one.
@Suite struct LazyPagesTests {
    static func page(_ guids: [String]) -> Result<TransportResponse, RoostError> {
        ScriptedTransport.json(
            200, #"{"items":[\#(guids.map { objectJSON($0, #""text":"t""#) }.joined(separator: ","))]}"#)
    }

    @Test func eachPageIsFetchedWhenAskedFor() async throws {
        let transport = ScriptedTransport([Self.page(["a", "b"]), Self.page(["c", "d"]), Self.page(["e"])])
        let client = try makeUnitClient(transport)
        var iterator = client.query(Note.self).pages(size: 2, cachePolicy: .networkOnly).makeAsyncIterator()
        #expect(transport.requests.isEmpty, "nothing before the first next()")
        #expect(try await iterator.next()?.map(\.guid) == ["a", "b"])
        #expect(transport.requests.map(\.path) == ["/ff/resources/Note?count=2"])
        #expect(try await iterator.next()?.map(\.guid) == ["c", "d"])
        #expect(transport.requests.last?.path == "/ff/resources/Note?start=2&count=2")
        #expect(try await iterator.next()?.map(\.guid) == ["e"])
        #expect(try await iterator.next() == nil, "a short page was the last")
        #expect(transport.requests.count == 3)
    }

    @Test func breakingOutStopsFetching() async throws {
        let transport = ScriptedTransport([Self.page(["a", "b"]), Self.page(["c", "d"])])
        let client = try makeUnitClient(transport)
        for try await page in client.query(Note.self).pages(size: 2, cachePolicy: .networkOnly) {
            #expect(page.count == 2)
            break
        }
        #expect(transport.requests.count == 1)
    }
}
