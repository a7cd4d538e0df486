import Foundation
import RoostCore
import RoostJSON
import RoostQuery
import RoostSQLite
import RoostStore
import RoostTestSupport
import Synchronization
import Testing

/// A store whose every update first lets another write change the object: the race an
/// optimistic write must survive (or report) when another server shares the database.
final class RacingStore: ObjectStore {
    let base: SQLiteObjectStore
    /// How many updates the competitor should win; -1 for all.
    let competitorWins: Int
    private let raced = Mutex(0)

    init(_ base: SQLiteObjectStore, competitorWins: Int) {
        self.base = base
        self.competitorWins = competitorWins
    }

    /// Another write changes the object first, as long as the competitor is to win.
    private func compete(_ collection: String, _ guid: String) async throws {
        let race = raced.withLock { count in
            count += 1
            return competitorWins < 0 || count <= competitorWins
        }
        guard race, var current = try await base.object(in: collection, guid: guid) else { return }
        let text = String(decoding: current.document, as: UTF8.self)
        current.document = Array(
            text.replacingOccurrences(of: "}", with: ",\"rival\(current.version)\":1}").utf8)
        current.version += 1
        try await base.update(current, expectedVersion: current.version - 1)
    }

    func update(_ next: StoredObject, expectedVersion: Int64, marking key: IdempotencyMark?) async throws {
        try await compete(next.collection, next.guid)
        try await base.update(next, expectedVersion: expectedVersion, marking: key)
    }

    func insert(_ object: StoredObject, marking key: IdempotencyMark?) async throws {
        try await base.insert(object, marking: key)
    }
    func object(in collection: String, guid: String) async throws -> StoredObject? {
        try await base.object(in: collection, guid: guid)
    }
    func delete(
        in collection: String, guid: String, expectedVersion: Int64, marking key: IdempotencyMark?,
        by actor: String?
    ) async throws {
        try await compete(collection, guid)
        try await base.delete(
            in: collection, guid: guid, expectedVersion: expectedVersion, marking: key, by: actor)
    }
    func claimBlob(_ sha256: String, at now: Int64) async throws { try await base.claimBlob(sha256, at: now) }
    func objects(in collection: String, guids: [String], restriction: QueryExpression?) async throws
        -> [String: [UInt8]]
    {
        try await base.objects(in: collection, guids: guids, restriction: restriction)
    }
    func list(_ request: ListRequest) async throws -> ListPage { try await base.list(request) }
    func randomPick(_ request: ListRequest) async throws -> ListPage { try await base.randomPick(request) }
    func accessFacts(userGuid: String) async throws -> UserAccessFacts? {
        try await base.accessFacts(userGuid: userGuid)
    }
}

@Suite("The write path")
struct WritePathTests {
    static let admin = Principal(userGuid: "admin", tokenId: "t", isAdmin: true)

    func service(competitorWins: Int) async throws -> (ObjectService, String) {
        let directory = NSTemporaryDirectory() + "roost-write-path-" + UUID().uuidString
        let store = RacingStore(
            try SQLiteObjectStore(directory: directory, collections: .builtIn), competitorWins: competitorWins
        )
        let service = ObjectService(store: store)
        let created = try await service.create(
            in: "Note", body: JSONObject(uniqueMembers: [("n", .integer(1))]), caller: Self.admin)
        return (service, created.guid)
    }

    @Test("a write that loses the race to another server is rebuilt on the winner's version")
    func aLostRaceIsRetried() async throws {
        let (service, guid) = try await service(competitorWins: 1)
        let patched = try await service.patch(
            in: "Note", guid: guid, patch: JSONObject(uniqueMembers: [("mine", .bool(true))]), ifMatch: nil,
            caller: Self.admin)
        #expect(patched.version == 3)
        guard case .object(let fields) = try JSONParser.parse(patched.document) else {
            throw WritePathFailure()
        }
        #expect(fields["rival1"] == .integer(1), "the winner's change is kept")
        #expect(fields["mine"] == .bool(true))
    }

    @Test("with If-Match, a lost race is a 412 against the winner's version")
    func aLostRaceWithIfMatchIs412() async throws {
        let (service, guid) = try await service(competitorWins: 2)
        await #expect(throws: RoostError.versionMismatch(expected: "\"1\"", current: 2)) {
            _ = try await service.patch(
                in: "Note", guid: guid, patch: JSONObject(), ifMatch: "\"1\"", caller: Self.admin)
        }
        await #expect(throws: RoostError.versionMismatch(expected: "\"2\"", current: 3)) {
            try await service.delete(in: "Note", guid: guid, ifMatch: "\"2\"", caller: Self.admin)
        }
    }

    @Test("a write that always loses gives up with 503 write_contention")
    func endlessContention() async throws {
        let (service, guid) = try await service(competitorWins: -1)
        do {
            _ = try await service.patch(
                in: "Note", guid: guid, patch: JSONObject(), ifMatch: nil, caller: Self.admin)
            Issue.record("the write should have given up")
        } catch let error as RoostError {
            #expect(error.status == 503)
            #expect(error.code == "write_contention")
        }
    }

    /// The single writer runs SQL only: documents, rules and blob references are worked out
    /// before a write queues, so a large write never holds up the others with its parsing.
    @Test("the writer's closures parse no JSON, whatever the write")
    func theWriterParsesNoJSON() async throws {
        let server = try await makeOpenServer()
        let client = server.client
        let before = JSONParseAudit.forbiddenParses
        let large = "{" + (0..<4000).map { "\"k\($0)\":\($0)" }.joined(separator: ",") + "}"
        let created = try await client.send("POST", "/ff/resources/Big", json: large)
        #expect(created.status == 201)
        let path = "/ff/resources/Big/\(try #require(created.json["guid"] as? String))"
        #expect(try await client.send("PUT", path, json: large).status == 200)
        #expect(try await client.send("PATCH", path, json: #"{"k1":null,"extra":{"a":1}}"#).status == 200)
        #expect(try await client.send("PUT", path + "/photo", body: [1, 2, 3]).status == 200)
        #expect(try await client.send("PUT", path + "/photo", body: [1, 2, 3]).status == 200)
        #expect(
            try await client.send("PUT", path + "/ffACL", json: #"{"readUsers":["*"],"writeUsers":["*"]}"#)
                .status == 200)
        #expect(try await client.send("DELETE", path + "/ffACL").status == 204)
        #expect(try await client.send("DELETE", path + "/photo").status == 204)
        #expect(try await client.send("DELETE", path).status == 204)
        #expect(JSONParseAudit.forbiddenParses == before)
        await server.stop()
    }

    /// A create with a taken guid must not tell a stranger more than a read does, yet the SDK's
    /// safe retry of a create (same guid, reply lost) still needs its 409.
    @Test("a create with the guid of a hidden object answers as a read does; its creator gets 409")
    func aTakenGuidOfAHiddenObject() async throws {
        let definition = permissionDefinition.replacingOccurrences(
            of: #""Profile":"#, with: #""Dropbox": {"rules": {"list": "none", "read": "none"}}, "Profile":"#)
        let world = try await PermissionWorld.make(definition: definition)
        for collection in ["Diary", "Dropbox"] {
            let path = "/ff/resources/\(collection)"
            #expect(try await world.send(.owner, "POST", path, json: #"{"guid":"taken"}"#).status == 201)
            let read = try await world.send(.other, "GET", path + "/taken")
            #expect(read.status == 404)
            let create = try await world.send(.other, "POST", path, json: #"{"guid":"taken"}"#)
            #expect(create.status == 404, "\(collection)")
            #expect(create.text == read.text, "\(collection)")
            let retried = try await world.send(.owner, "POST", path, json: #"{"guid":"taken"}"#)
            #expect(retried.status == 409, "\(collection): the creator, even when it cannot read it")
            #expect(retried.json["code"] as? String == "conflict")
            #expect(try await world.send(.admin, "POST", path, json: #"{"guid":"taken"}"#).status == 409)
        }
        // Who can read the object learns nothing new from a 409.
        #expect(
            try await world.send(.owner, "POST", "/ff/resources/Acronym", json: #"{"guid":"a1"}"#).status
                == 201)
        let readable = try await world.send(.other, "POST", "/ff/resources/Acronym", json: #"{"guid":"a1"}"#)
        #expect(readable.status == 409)
        await world.server.stop()
    }

    /// RFC 7396, appendix A (the cases whose target is an object), plus the order Roost keeps.
    static let mergePatchCases: [(target: String, patch: String, result: String)] = [
        (#"{"a":"b"}"#, #"{"a":"c"}"#, #"{"a":"c"}"#),
        (#"{"a":"b"}"#, #"{"b":"c"}"#, #"{"a":"b","b":"c"}"#),
        (#"{"a":"b"}"#, #"{"a":null}"#, "{}"),
        (#"{"a":"b","b":"c"}"#, #"{"a":null}"#, #"{"b":"c"}"#),
        (#"{"a":["b"]}"#, #"{"a":"c"}"#, #"{"a":"c"}"#),
        (#"{"a":"c"}"#, #"{"a":["b"]}"#, #"{"a":["b"]}"#),
        (#"{"a":{"b":"c"}}"#, #"{"a":{"b":"d","c":null}}"#, #"{"a":{"b":"d"}}"#),
        (#"{"a":[{"b":"c"}]}"#, #"{"a":[1]}"#, #"{"a":[1]}"#),
        (#"{"e":null}"#, #"{"a":1}"#, #"{"e":null,"a":1}"#),
        ("{}", #"{"a":{"bb":{"ccc":null}}}"#, #"{"a":{"bb":{}}}"#),
        (#"{"x":1,"y":2,"z":3}"#, #"{"y":null,"w":4,"x":5,"v":null}"#, #"{"x":5,"z":3,"w":4}"#),
    ]

    @Test("merge patch follows RFC 7396 and keeps members in place", arguments: mergePatchCases)
    func mergePatch(target: String, patch: String, result: String) throws {
        guard case .object(let target) = try JSONParser.parse(target),
            case .object(let patch) = try JSONParser.parse(patch)
        else { throw WritePathFailure() }
        #expect(JSONWriter.string(.object(MergePatch.apply(patch, to: target))) == result)
    }

    @Test("merge patch of large objects: thousands of removals and additions in one pass")
    func largeMergePatch() throws {
        let keys = 0..<20_000
        let target = JSONObject(uniqueMembers: keys.map { ("k\($0)", JSONValue.integer(Int64($0))) })
        let patch = JSONObject(
            uniqueMembers: keys.map { ("k\($0)", $0 % 2 == 0 ? JSONValue.null : .bool(true)) }
                + keys.map { ("n\($0)", JSONValue.integer(1)) })
        let merged = MergePatch.apply(patch, to: target)
        #expect(merged.count == 30_000)
        #expect(merged.members.first?.key == "k1")
        #expect(merged["k2"] == nil)
        #expect(merged["k3"] == .bool(true))
        #expect(merged.members.last?.key == "n19999")
    }
}

struct WritePathFailure: Error {}
