import Foundation
import RoostClient
import RoostTestSupport
import Testing

/// The device evaluates queries (for offline answers and queued writes) with the server's
/// semantics: each condition, answered by a real server and offline from the cache, picks the
/// same objects.
@Suite struct DeviceQueryAgreementTests {
    struct Thing: RoostModel {
        var name: String?
        var size: JSON?
        var tags: JSON?
        var nested: JSON?
        var flag: Bool?
    }

    static let things: [Thing] = [
        Thing(name: "apple", size: 3, tags: ["red", "fruit"], nested: ["level": 1], flag: true),
        Thing(name: "Banana", size: 10, tags: "yellow fruit", nested: ["level": 2], flag: false),
        Thing(name: "cherry", size: 2.5, tags: ["red"], nested: nil, flag: nil),
        Thing(name: "O'Brien", size: "10", tags: [], nested: ["level": "2"], flag: true),
        Thing(name: nil, size: nil, tags: nil, nested: ["other": 1], flag: nil),
        Thing(name: "date", size: -1, tags: ["brown", "fruit", "sweet"], nested: ["level": 3], flag: false),
    ]

    static let conditions: [QueryCondition] = [
        .field("name", .eq, "apple"), .field("name", .ne, "apple"), .field("name", .eq, "O'Brien"),
        .field("name", .lt, "b"), .field("name", .gte, "Banana"), .field("name", .eq, nil),
        .field("name", .ne, nil),
        .field("size", .gt, 2.5), .field("size", .lte, 3), .field("size", .eq, 10), .field("size", .eq, "10"),
        .field("size", .lt, "5"), .field("flag", .eq, true), .field("flag", .eq, false),
        .field("flag", .ne, true),
        .field("tags", .containsAny, "red yellow"), .field("tags", .containsAll, "fruit red"),
        .field("tags", .containsAny, "fruit"), .field("nested.level", .gte, 2),
        .field("nested.level", .eq, "2"),
        .field("nested.level", .eq, nil), .field("name", .matches, "^[a-c]"), .field("name", .matches, "rr"),
        .field("size", .gt, 0) && .field("flag", .eq, false),
        .field("size", .lt, 0) || .field("name", .eq, "apple"),
        !.field("tags", .containsAny, "red"), !(.field("size", .gte, 3) || .field("flag", .eq, true)),
    ]

    @Test func theDeviceAndTheServerPickTheSameObjects() async throws {
        let server = try await makeServer()
        let storage = TestServer.makeTemporaryDirectory()
        let online = try makeClient(port: server.port, storage: storage)
        for thing in Self.things { _ = try await online.create(thing) }
        #expect(try await online.query(Thing.self).page().count == Self.things.count)  // cached
        var serverAnswers: [[String]] = []
        for condition in Self.conditions {
            let page = try await online.query(Thing.self).where(condition).page(cachePolicy: .networkOnly)
            serverAnswers.append(page.compactMap(\.name).sorted())
        }
        await online.close()

        let offline = try makeClient(port: 9, storage: storage)
        for (condition, expected) in zip(Self.conditions, serverAnswers) {
            let page = try await offline.query(Thing.self).where(condition).fetchPage()
            let text = try condition.text()
            #expect(page.origin == .device)
            #expect(page.items.compactMap(\.name).sorted() == expected, "\(text)")
        }

        // Sorting too: mixed types, missing fields, ties. (Arrays and objects, which SQLite sorts
        // by their JSON text, are not compared.)
        let reader = try makeClient(port: server.port)
        for keys in [["size"], ["size desc"], ["flag", "name desc"], ["nested.level desc"]] {
            let served = try await Self.sorted(reader.query(Thing.self), keys).page(cachePolicy: .networkOnly)
            let answered = try await Self.sorted(offline.query(Thing.self), keys).where("name", .ne, "never")
                .page()
            #expect(answered.map(\.guid) == served.map(\.guid), "\(keys)")
        }
    }

    static func sorted(_ query: Query<Thing>, _ keys: [String]) -> Query<Thing> {
        keys.reduce(query) { query, key in
            query.sorted(by: String(key.split(separator: " ")[0]), descending: key.hasSuffix(" desc"))
        }
    }
}
