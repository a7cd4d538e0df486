import Foundation
import RoostClient
import Testing

/// Queued updates that meet a change made elsewhere (412): rebased field by field, settled by
/// the policy, always reported.
@Suite struct ConflictUnitTests {
    static let owner = Credential(token: "t", userGuid: "u1", userName: "al")
    static let base = objectJSON("a", #""text":"buy milk","count":1"#)

    /// Reads `a` at version 1, changes it with `edit`, and sends the update through the queue
    /// against a server that moved on to `theirs` (version 2); returns the requests, events
    /// and what the update returned.
    func run(
        theirs: String, edit: (inout Stored<Note>) -> Void, policy: ConflictPolicy = .serverWins,
        after: [Result<TransportResponse, RoostError>]
    ) async throws -> (
        requests: [TransportRequest], events: [QueueEvent], outcome: Result<WriteOutcome<Note>, any Error>
    ) {
        let transport = ScriptedTransport(
            [
                ScriptedTransport.json(200, Self.base), errorJSON(412, "version_mismatch"),
                ScriptedTransport.json(200, objectJSON("a", version: 2, theirs)),
            ] + after)
        let client = try makeUnitClient(transport, credential: Self.owner) { $0.conflictPolicy = policy }
        let events = await client.queueEvents()
        var read = try await client.fetch(Note.self, guid: "a", cachePolicy: .networkOnly)
        edit(&read)
        let outcome: Result<WriteOutcome<Note>, any Error>
        do {
            outcome = .success(try await client.update(read, policy: .queueWhenOffline))
        } catch {
            outcome = .failure(error)
        }
        await client.close()
        var seen: [QueueEvent] = []
        for await event in events { seen.append(event) }
        return (Array(transport.requests.dropFirst()), seen, outcome)
    }

    func body(_ request: TransportRequest) throws -> JSON {
        try JSONDecoder().decode(JSON.self, from: try #require(request.body))
    }

    func conflictReport(_ events: [QueueEvent]) -> ConflictReport? {
        for case .conflict(_, let report) in events { return report }
        return nil
    }

    @Test func changesToDifferentFieldsAreBothKept() async throws {
        let (requests, events, outcome) = try await run(
            theirs: #""text":"buy oat milk","count":1"#, edit: { $0.count = 2 },
            after: [
                ScriptedTransport.json(200, objectJSON("a", version: 3, #""text":"buy oat milk","count":2"#))
            ])
        #expect(requests.map(\.method) == ["PATCH", "GET", "PATCH"])
        #expect(try body(requests[0]) == ["count": 2])
        #expect(try body(requests[2]) == ["count": 2])
        #expect(requests[2].headers["If-Match"] == "\"2\"")
        #expect(
            requests[2].headers["Idempotency-Key"] != requests[0].headers["Idempotency-Key"], "a new request")
        #expect(conflictReport(events)?.outcome == .mergedAutomatically)
        #expect(conflictReport(events)?.conflict.fields == [])
        let stored = try #require(try outcome.get().stored)
        #expect(stored.value == Note(text: "buy oat milk", count: 2))
    }

    @Test func theSameFieldGoesToThePolicyServerWinsByDefault() async throws {
        let (requests, events, outcome) = try await run(
            theirs: #""text":"renamed","count":1"#,
            edit: {
                $0.text = "mine"; $0.count = 7
            },
            after: [ScriptedTransport.json(200, objectJSON("a", version: 3, #""text":"renamed","count":7"#))])
        #expect(try body(requests[2]) == ["count": 7], "only what does not conflict")
        let report = try #require(conflictReport(events))
        #expect(report.outcome == .serverWon)
        #expect(report.conflict.fields == ["text"])
        #expect(report.conflict.base?["text"] == "buy milk")
        #expect(report.conflict.mine?["text"] == "mine")
        #expect(report.conflict.theirs["text"] == "renamed")
        #expect(try outcome.get().stored?.text == "renamed")
    }

    @Test func serverWinsWithNothingElseToSendSendsNothing() async throws {
        let (requests, events, outcome) = try await run(
            theirs: #""text":"renamed","count":1"#, edit: { $0.text = "mine" }, after: [])
        #expect(requests.map(\.method) == ["PATCH", "GET"])
        #expect(conflictReport(events)?.outcome == .serverWon)
        #expect(try outcome.get().stored?.text == "renamed")
    }

    @Test func clientWinsWritesOverTheServer() async throws {
        let (requests, events, _) = try await run(
            theirs: #""text":"renamed","count":1"#, edit: { $0.text = "mine" }, policy: .clientWins,
            after: [ScriptedTransport.json(200, objectJSON("a", version: 3, #""text":"mine","count":1"#))])
        #expect(try body(requests[2]) == ["text": "mine"])
        #expect(conflictReport(events)?.outcome == .clientWon)
    }

    @Test func theAppsHandlerMerges() async throws {
        let (requests, events, _) = try await run(
            theirs: #""text":"renamed","count":1"#, edit: { $0.text = "mine" },
            policy: .custom { conflict in
                var merged = conflict.theirs
                merged["text"] = .string(
                    "\(conflict.theirs["text"]!.stringValue!) + \(conflict.mine!["text"]!.stringValue!)")
                return .merged(merged)
            },
            after: [
                ScriptedTransport.json(
                    200, objectJSON("a", version: 3, #""text":"renamed + mine","count":1"#))
            ])
        #expect(try body(requests[2]) == ["text": "renamed + mine"])
        #expect(requests[2].headers["If-Match"] == "\"2\"")
        #expect(conflictReport(events)?.outcome == .mergedByApp)
    }

    @Test func aHandlerThatGivesUpFailsTheWriteLoudly() async throws {
        let (requests, events, outcome) = try await run(
            theirs: #""text":"renamed","count":1"#, edit: { $0.text = "mine" },
            policy: .custom { _ in .giveUp },
            after: [])
        #expect(requests.map(\.method) == ["PATCH", "GET"])
        #expect(conflictReport(events)?.outcome == .gaveUp)
        #expect(
            events.contains {
                if case .failed(_, let error) = $0 { error.code == "conflict_unresolved" } else { false }
            })
        #expect(throws: RoostError.self) { try outcome.get() }
        if case .failure(let error as RoostError) = outcome {
            #expect(error.code == "conflict_unresolved")
            #expect(error.details["fields"] == ["text"])
            #expect(error.localizedDescription.contains("text"))
        }
    }

    @Test func anObjectDeletedElsewhereIsReported() async throws {
        let transport = ScriptedTransport([
            ScriptedTransport.json(200, Self.base), errorJSON(412, "version_mismatch"),
            errorJSON(404, "not_found"),
        ])
        let client = try makeUnitClient(transport, credential: Self.owner)
        var read = try await client.fetch(Note.self, guid: "a", cachePolicy: .networkOnly)
        read.text = "mine"
        let events = await client.queueEvents()
        await #expect(throws: RoostError.self) { try await client.update(read, policy: .queueWhenOffline) }
        await client.close()
        var seen: [QueueEvent] = []
        for await event in events { seen.append(event) }
        #expect(conflictReport(seen)?.outcome == .deletedOnServer)
    }

    @Test func attemptsAreCountedAndADeleteOfNothingSaysSo() async throws {
        let transport = ScriptedTransport([
            ScriptedTransport.unreachable, ScriptedTransport.unreachable, errorJSON(404, "not_found"),
        ])
        let client = try makeUnitClient(transport, credential: Self.owner)
        guard case .queued = try await client.delete(Note.self, guid: "never", policy: .queueWhenOffline)
        else {
            Issue.record("not queued")
            return
        }
        #expect(await client.pendingOperations.first?.attempts == 1)
        _ = await client.flush()
        #expect(await client.pendingOperations.first?.attempts == 2)
        let events = await client.queueEvents()
        #expect(await client.flush() == FlushResult(delivered: 1, failed: 0, state: .idle))
        await client.close()
        var seen: [QueueEvent] = []
        for await event in events { seen.append(event) }
        #expect(seen.contains { if case .sent(_, status: 404) = $0 { true } else { false } })

        let direct = try makeUnitClient(
            ScriptedTransport([errorJSON(404, "not_found")]), credential: Self.owner)
        #expect(try await direct.delete(Note.self, guid: "never", policy: .queueWhenOffline) == .notFound)
    }

    @Test func aServerThatKeepsMovingOnDoesNotHoldThePass() async throws {
        var script: [Result<TransportResponse, RoostError>] = [ScriptedTransport.json(200, Self.base)]
        for version in 2...8 {
            script += [
                errorJSON(412, "version_mismatch"),
                ScriptedTransport.json(
                    200, objectJSON("a", version: version, #""text":"v\#(version)","count":1"#)),
            ]
        }
        let transport = ScriptedTransport(script)
        let client = try makeUnitClient(transport, credential: Self.owner)
        var read = try await client.fetch(Note.self, guid: "a", cachePolicy: .networkOnly)
        read.count = 2
        guard case .queued(let operation) = try await client.update(read, policy: .queueWhenOffline) else {
            Issue.record("delivered")
            return
        }
        // Five rebases, each sent once more; then the pass waits for the next one.
        #expect(transport.requests.filter { $0.method == "PATCH" }.count == 6)
        let pending = try #require(await client.pendingOperations.first)
        #expect(pending.id == operation.id)
        #expect(pending.attempts == 6)
        #expect(pending.expectedVersion == 6, "rebased on the fifth newer version read")
    }
}
