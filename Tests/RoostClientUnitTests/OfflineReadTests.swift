import Foundation
import RoostClient
import Testing

/// Reads show this device's queued writes at once, and answer offline from what is cached.
@Suite struct OfflineReadTests {
    static let owner = Credential(token: "t", userGuid: "u1", userName: "al")

    @Test func queuedWritesShowInGetsAndListsAtOnce() async throws {
        let a = objectJSON("a", #""text":"buy milk","count":1"#)
        let b = objectJSON("b", #""text":"walk","count":2"#)
        let transport = ScriptedTransport([
            ScriptedTransport.json(200, a, headers: ["ETag": "\"1\""]),  // fetch a
            ScriptedTransport.json(200, #"{"items":[\#(a),\#(b)]}"#, headers: ["ETag": "W/\"l\""]),  // list
            // Offline from here: every request fails.
        ])
        let client = try makeUnitClient(transport, credential: Self.owner)
        var read = try await client.fetch(Note.self, guid: "a")
        #expect(read.hasPendingWrites == false)
        #expect(read.origin == .server)
        let listed = try await client.query(Note.self).where("count", .lte, 2).sorted(by: "text").page()
        #expect(listed.map(\.guid) == ["a", "b"])

        read.count = 5
        guard case .queued = try await client.update(read, policy: .queueWhenOffline) else {
            Issue.record("delivered offline")
            return
        }
        _ = try await client.delete(Note.self, guid: "b", expectedVersion: 1, policy: .queueWhenOffline)
        let created = try await client.create(
            Note(text: "call mum", count: 0), guid: "c", policy: .queueWhenOffline)
        #expect(created.guid == "c")
        _ = try await client.create(Note(text: "too many", count: 9), guid: "d", policy: .queueWhenOffline)

        let shown = try await client.fetch(Note.self, guid: "a")
        #expect(shown.value == Note(text: "buy milk", count: 5))
        #expect(shown.hasPendingWrites)
        #expect(shown.origin == .cache)
        #expect(shown.metadata.version == 1, "the version the queued update is based on")
        let new = try await client.fetch(Note.self, guid: "c")
        #expect(new.value == Note(text: "call mum", count: 0))
        #expect(new.hasPendingWrites && new.origin == .device && new.metadata.version == 1)
        await #expect(throws: RoostError.self) { try await client.fetch(Note.self, guid: "b") }

        // The list's cached answer, with a no longer matching (count 5), b deleted, c created
        // (it matches) and d left out (count 9 does not match), in the query's order.
        let page = try await client.query(Note.self).where("count", .lte, 2).sorted(by: "text").fetchPage()
        #expect(page.items.map(\.guid) == ["c"])
        #expect(page.hasPendingWrites)
        let all = try await client.query(Note.self).where("count", .lte, 10).sorted(
            by: "count", descending: true
        )
        .page(cachePolicy: .networkElseCache)
        // Never asked before: answered on the device from cached objects and queued creates.
        #expect(all.map(\.guid) == ["d", "a", "c"])
        #expect(all.allSatisfy { $0.origin == .device })
    }

    @Test func aQueryNeverAnsweredFailsOfflineWhenTheAppSaysSo() async throws {
        let client = try makeUnitClient(ScriptedTransport([])) { $0.offlineQueries = .failWithoutCache }
        do {
            _ = try await client.query(Note.self).where("count", .gt, 1).page()
            Issue.record("answered without a cache")
        } catch let error as RoostError {
            #expect(error.code == "offline_no_cache")
            #expect(error.status == nil)
            #expect(error.details["cause"] == "network_unreachable")
            #expect(error.recoverySuggestion?.contains("answerFromCachedObjects") == true)
        }
        // Raw text cannot be evaluated on the device, whatever the policy.
        let lenient = try makeUnitClient(ScriptedTransport([]))
        await #expect(throws: RoostError.self) {
            try await lenient.query(Note.self, raw: "count gt 1").page()
        }
        let empty = try await lenient.query(Note.self).where("count", .gt, 1).fetchPage()
        #expect(empty.items.isEmpty && empty.origin == .device)
    }

    @Test func offlineAnObjectSeenOnlyInAListIsReadFromIt() async throws {
        let a = objectJSON("a", #""text":"buy milk","count":1"#)
        let transport = ScriptedTransport([ScriptedTransport.json(200, #"{"items":[\#(a)]}"#)])
        let client = try makeUnitClient(transport, credential: Self.owner)
        _ = try await client.query(Note.self).page()
        let read = try await client.fetch(Note.self, guid: "a")
        #expect(read.text == "buy milk")
        #expect(read.origin == .cache)
        await #expect(throws: RoostError.self) {
            try await client.fetch(Note.self, guid: "a", cachePolicy: .networkOnly)
        }
    }

    @Test func aPageWithQueuedCreatesKeepsItsSize() async throws {
        let page = #"{"items":[\#(objectJSON("a", #""text":"a""#)),\#(objectJSON("b", #""text":"b""#))]}"#
        let transport = ScriptedTransport([ScriptedTransport.json(200, page)])
        let client = try makeUnitClient(transport, credential: Self.owner)
        _ = try await client.query(Note.self).sorted(by: "text").page(count: 2)
        _ = try await client.create(Note(text: "0 first"), guid: "c", policy: .queueWhenOffline)
        let shown = try await client.query(Note.self).sorted(by: "text").page(count: 2)
        #expect(shown.map(\.guid) == ["c", "a"], "the queued create sorts first; the page stays at 2")
    }
}
