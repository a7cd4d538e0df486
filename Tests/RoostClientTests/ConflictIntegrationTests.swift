import Foundation
import RoostClient
import RoostTestSupport
import Testing

/// Two devices edit one object on a real server, one of them offline (its client points at a
/// closed port, then relaunches on the server's), in every order: the final state and the
/// events are asserted, and nothing is dropped without an event.
@Suite struct ConflictIntegrationTests {
    /// A port nothing listens on: the offline device's requests are refused.
    static let closedPort = 9

    struct Scenario: Sendable, CustomStringConvertible {
        let name: String
        /// The offline device's change and the online one's.
        let offline: @Sendable (inout Stored<Note>) -> Void
        let online: @Sendable (inout Stored<Note>) -> Void
        let policy: ConflictPolicy
        /// Whether the offline device's queue reaches the server before the online edit.
        let offlineFirst: Bool
        let expected: Note
        let outcome: ConflictReport.Outcome?
        var description: String { name }
    }

    static let scenarios: [Scenario] = [
        Scenario(
            name: "different fields, online edit first", offline: { $0.count = 2 },
            online: { $0.text = "oat milk" },
            policy: .serverWins, offlineFirst: false, expected: Note(text: "oat milk", count: 2),
            outcome: .mergedAutomatically),
        Scenario(
            name: "same field, server wins", offline: { $0.text = "mine" }, online: { $0.text = "theirs" },
            policy: .serverWins, offlineFirst: false, expected: Note(text: "theirs", count: 1),
            outcome: .serverWon),
        Scenario(
            name: "same field, client wins", offline: { $0.text = "mine" }, online: { $0.text = "theirs" },
            policy: .clientWins, offlineFirst: false, expected: Note(text: "mine", count: 1),
            outcome: .clientWon),
        Scenario(
            name: "same field, the app merges", offline: { $0.text = "mine" }, online: { $0.text = "theirs" },
            policy: .custom { conflict in
                var merged = conflict.theirs
                merged["text"] = "theirs and mine"
                return .merged(merged)
            }, offlineFirst: false, expected: Note(text: "theirs and mine", count: 1), outcome: .mergedByApp),
        Scenario(
            name: "offline edit lands first, the online edit is rebased", offline: { $0.text = "mine" },
            online: { $0.count = 5 }, policy: .serverWins, offlineFirst: true,
            expected: Note(text: "mine", count: 5), outcome: nil),
    ]

    @Test(arguments: scenarios)
    func twoDevicesEditOneObject(_ scenario: Scenario) async throws {
        let server = try await makeServer()
        let online = try makeClient(port: server.port)
        let created = try await online.create(Note(text: "buy milk", count: 1))

        // The offline device read the object while online, then lost the network.
        let storage = TestServer.makeTemporaryDirectory()
        let reader = try makeClient(port: server.port, storage: storage)
        _ = try await reader.fetch(Note.self, guid: created.guid)
        await reader.close()
        let offline = try makeClient(port: Self.closedPort, storage: storage)
        var mine = try await offline.fetch(Note.self, guid: created.guid)
        #expect(mine.origin == .cache)
        scenario.offline(&mine)
        guard case .queued = try await offline.update(mine, policy: .queueWhenOffline) else {
            Issue.record("delivered to a closed port")
            return
        }
        let shown = try await offline.fetch(Note.self, guid: created.guid)
        #expect(shown.hasPendingWrites)
        #expect(shown.value == mine.value, "the device's own write shows at once")
        await offline.close()

        var theirs = try await online.fetch(Note.self, guid: created.guid)
        scenario.online(&theirs)
        let back = try makeClient(port: server.port, storage: storage)
        await back.setConflictPolicy(scenario.policy)
        let events = await back.queueEvents()
        if scenario.offlineFirst {
            #expect(await back.flush() == FlushResult(delivered: 1, failed: 0, state: .idle))
            // The online device's direct update meets the landed offline one: a 412, never silent.
            await #expect(throws: RoostError.self) { try await online.update(theirs) }
            // Queued instead, it is rebased field by field and lands.
            let outcome = try await online.update(theirs, policy: .queueWhenOffline)
            #expect(outcome.stored?.value == scenario.expected)
        } else {
            _ = try await online.update(theirs)
            #expect(await back.flush() == FlushResult(delivered: 1, failed: 0, state: .idle))
        }
        await back.close()
        var seen: [QueueEvent] = []
        for await event in events { seen.append(event) }
        let reports = seen.compactMap { event -> ConflictReport? in
            if case .conflict(_, let report) = event { return report }
            return nil
        }
        #expect(reports.map(\.outcome) == (scenario.outcome.map { [$0] } ?? []))

        let items = try await server.items("Note")
        #expect(items.count == 1)
        #expect(items.first?["text"] as? String == scenario.expected.text)
        #expect(items.first?["count"] as? Int == scenario.expected.count)
    }

    @Test func anEditOfAnObjectDeletedElsewhereIsReportedNotDropped() async throws {
        let server = try await makeServer()
        let online = try makeClient(port: server.port)
        let created = try await online.create(Note(text: "buy milk", count: 1))
        let storage = TestServer.makeTemporaryDirectory()
        let reader = try makeClient(port: server.port, storage: storage)
        _ = try await reader.fetch(Note.self, guid: created.guid)
        await reader.close()
        let offline = try makeClient(port: Self.closedPort, storage: storage)
        var mine = try await offline.fetch(Note.self, guid: created.guid)
        mine.text = "mine"
        _ = try await offline.update(mine, policy: .queueWhenOffline)
        await offline.close()
        _ = try await online.delete(created)

        let back = try makeClient(port: server.port, storage: storage)
        let events = await back.queueEvents()
        #expect(await back.flush() == FlushResult(delivered: 0, failed: 1, state: .idle))
        await back.close()
        var seen: [QueueEvent] = []
        for await event in events { seen.append(event) }
        #expect(
            seen.contains {
                if case .conflict(_, let report) = $0 { report.outcome == .deletedOnServer } else { false }
            })
        #expect(
            seen.contains { if case .failed(_, let error) = $0 { error.code == "not_found" } else { false } })
        #expect(try await server.count("Note") == 0)
    }
}
