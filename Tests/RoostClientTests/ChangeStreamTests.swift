import Foundation
import RoostClient
import RoostTestSupport
import Synchronization
import Testing

/// `client.changes(of:)` against a real server: order, queries, resuming after a cut, and what
/// ends a stream.
@Suite struct ChangeStreamTests {
    @Test func createUpdateDeleteArriveInOrder() async throws {
        let server = try await makeServer()
        let client = try makeClient(port: server.port)
        let recorder = ChangeRecorder<Note>()
        let task = recorder.record(client.changes(of: Note.self))
        #expect(await server.openEventStreams(becomes: 1))

        _ = try await client.create(Celebrity(name: "Ada", gender: "female"))  // another collection
        let note = try await client.create(Note(text: "a"))
        var edited = note
        edited.text = "b"
        let updated = try await client.update(edited)
        #expect(try await client.delete(updated) == .deleted)

        let changes = await recorder.wait(for: 3)
        #expect(labels(changes, \.text) == ["created a", "updated b", "deleted \(note.guid)"])
        #expect(changes.map(\.position) == changes.map(\.position).sorted())
        #expect(Set(changes.map(\.position)).count == 3)
        #expect(changes[1].object?.metadata.version == 2)
        #expect(changes[1].guid == note.guid)

        // Cancelling the loop's task closes the server's side of the stream.
        task.cancel()
        #expect(await server.openEventStreams(becomes: 0))
        #expect(recorder.state.withLock { $0.error } == nil)
    }

    @Test func breakingOutOfTheLoopClosesTheServersStream() async throws {
        let server = try await makeServer()
        let client = try makeClient(port: server.port)
        let first = Task { () -> String? in
            for try await change in client.changes(of: Note.self) { return change.object?.text }
            return nil
        }
        #expect(await server.openEventStreams(becomes: 1))
        _ = try await client.create(Note(text: "only"))
        #expect(try await first.value == "only")
        #expect(await server.openEventStreams(becomes: 0))
    }

    @Test func aQuerySubscriptionHearsObjectsEnterAndLeave() async throws {
        let server = try await makeServer()
        let client = try makeClient(port: server.port)
        let recorder = ChangeRecorder<Celebrity>()
        let task = recorder.record(client.query(Celebrity.self).where("gender", .eq, "female").changes())
        #expect(await server.openEventStreams(becomes: 1))

        let ada = try await client.create(Celebrity(name: "Ada", gender: "male"))  // does not match
        _ = try await client.patch(Celebrity.self, guid: ada.guid, ["gender": "female"])
        _ = try await client.patch(Celebrity.self, guid: ada.guid, ["name": "Ada L"])
        _ = try await client.patch(Celebrity.self, guid: ada.guid, ["gender": "male"])
        let grace = try await client.create(Celebrity(name: "Grace", gender: "female"))
        _ = try await client.delete(Celebrity.self, guid: ada.guid)  // no longer matches: not heard
        _ = try await client.delete(Celebrity.self, guid: grace.guid)

        let changes = await recorder.wait(for: 5)
        #expect(
            labels(changes, \.name) == [
                "entered Ada", "updated Ada L", "left \(ada.guid)", "created Grace", "deleted \(grace.guid)",
            ])
        task.cancel()
    }

    @Test func oneObjectsChanges() async throws {
        let server = try await makeServer()
        let client = try makeClient(port: server.port)
        let note = try await client.create(Note(text: "watched"))
        let other = try await client.create(Note(text: "other"))
        let recorder = ChangeRecorder<Note>()
        let task = recorder.record(client.changes(of: note))
        #expect(await server.openEventStreams(becomes: 1))
        _ = try await client.patch(Note.self, guid: other.guid, ["text": "not heard"])
        _ = try await client.patch(Note.self, guid: note.guid, ["text": "heard"])
        _ = try await client.delete(Note.self, guid: note.guid)
        #expect(labels(await recorder.wait(for: 2), \.text) == ["updated heard", "deleted \(note.guid)"])
        task.cancel()
    }

    @Test func aCutConnectionResumesWithoutLossOrDuplicates() async throws {
        let server = try await makeServer()
        let proxy = try TCPProxy(to: server.port)
        defer { proxy.stop() }
        let client = try makeClient(port: proxy.port) { configuration in
            configuration.reconnectDelay = 0.02
            configuration.maxReconnectDelay = 0.2
        }
        let recorder = ChangeRecorder<Note>()
        let task = recorder.record(client.changes(of: Note.self))
        #expect(await server.openEventStreams(becomes: 1))
        for number in 1...5 { try await server.createNote("\(number)") }
        #expect(await recorder.wait(for: 5).count == 5)

        // The network goes: the server sees the stream end; writes go on while the client is away.
        proxy.cut(refusingNew: true)
        #expect(await server.openEventStreams(becomes: 0))
        for number in 6...10 { try await server.createNote("\(number)") }
        proxy.resume()
        #expect(await server.openEventStreams(becomes: 1))
        try await server.createNote("11")

        let changes = await recorder.wait(for: 11)
        #expect(labels(changes, \.text) == (1...11).map { "created \($0)" })
        #expect(changes.map(\.position) == changes.map(\.position).sorted())
        #expect(Set(changes.map(\.position)).count == 11)
        #expect(recorder.state.withLock { $0.error } == nil)
        task.cancel()
        #expect(await server.openEventStreams(becomes: 0))
    }

    @Test func aCutBeforeTheFirstEventLosesNothing() async throws {
        let server = try await makeServer()
        let proxy = try TCPProxy(to: server.port)
        defer { proxy.stop() }
        let client = try makeClient(port: proxy.port) { $0.reconnectDelay = 0.02 }
        let recorder = ChangeRecorder<Note>()
        let task = recorder.record(client.changes(of: Note.self))
        #expect(await server.openEventStreams(becomes: 1))
        // Cut before any event, once the stream's opening (which tells the client where it
        // started) is on its way to the client: before that the client has no position, and asked
        // for changes from whenever its stream starts.
        #expect(await eventually { proxy.hasSentToClients(": subscribed\n\n") })
        proxy.cut(refusingNew: true)
        #expect(await server.openEventStreams(becomes: 0))
        try await server.createNote("while away")
        proxy.resume()
        #expect(labels(await recorder.wait(for: 1), \.text) == ["created while away"])
        task.cancel()
    }

    @Test func aRevokedTokenEndsTheStreamWithInvalidToken() async throws {
        let server = try await makeServer()
        let alice = try makeClient(port: server.port)
        _ = try await alice.register(userName: "alice", password: "correct horse")
        let recorder = ChangeRecorder<Note>()
        _ = recorder.record(alice.changes(of: Note.self))
        #expect(await server.openEventStreams(becomes: 1))

        // A password change on another device ends every other session, this one's too.
        let phone = try makeClient(port: server.port)
        _ = try await phone.login(userName: "alice", password: "correct horse")
        try await phone.changePassword(current: "correct horse", new: "battery staple 42")

        let error = await recorder.waitForEnd()
        #expect(error?.status == 401)
        #expect(error?.code == "invalid_token")
        #expect(await !alice.isLoggedIn)
        #expect(await server.openEventStreams(becomes: 0))
    }

    @Test func anExpiredTokenEndsTheStreamWithInvalidToken() async throws {
        let clock = ManualWallClock()
        let server = try await makeExpiringServer(clock: clock)
        let alice = try makeClient(port: server.port)
        _ = try await alice.register(userName: "alice", password: "correct horse")
        let recorder = ChangeRecorder<Note>()
        _ = recorder.record(alice.changes(of: Note.self))
        #expect(await server.openEventStreams(becomes: 1))
        clock.advance(seconds: 61)
        let error = await recorder.waitForEnd()
        #expect(error?.status == 401)
        #expect(error?.code == "invalid_token")
        #expect(await !alice.isLoggedIn)
        #expect(await server.openEventStreams(becomes: 0))
    }

    @Test func loggingOutEndsTheStreamWithLoginRequired() async throws {
        let server = try await makeServer()
        let alice = try makeClient(port: server.port)
        _ = try await alice.register(userName: "alice", password: "correct horse")
        let recorder = ChangeRecorder<Note>()
        _ = recorder.record(alice.changes(of: Note.self))
        #expect(await server.openEventStreams(becomes: 1))
        #expect(try await alice.logout())
        let error = await recorder.waitForEnd()
        #expect(error?.code == "login_required")
        #expect(error?.status == nil)
        #expect(await server.openEventStreams(becomes: 0))
    }

    @Test func anInvalidQueryIsThrownNotRetried() async throws {
        let server = try await makeServer()
        let client = try makeClient(port: server.port)
        let recorder = ChangeRecorder<Note>()
        _ = recorder.record(client.query(Note.self, raw: "text eq").changes())
        let error = await recorder.waitForEnd()
        #expect(error?.status == 400)
        #expect(error?.code == "invalid_query")
        #expect(try await server.answered(route: "/ff/events", status: 400) == 1)
    }
}

/// What a change stream delivered, and how it ended.
struct Recorded<Model: RoostModel>: Sendable {
    var changes: [ObjectChange<Model>] = []
    var ended = false
    var error: RoostError?
}

/// Reads a change stream in its own task, so a test waits for what it expects with a bound
/// instead of hanging on an iterator.
final class ChangeRecorder<Model: RoostModel>: Sendable {
    let state = Mutex(Recorded<Model>())

    func record(_ changes: ObjectChanges<Model>) -> Task<Void, Never> {
        Task { [self] in
            do {
                for try await change in changes { state.withLock { $0.changes.append(change) } }
                state.withLock { $0.ended = true }
            } catch {
                state.withLock {
                    $0.error = error as? RoostError
                    $0.ended = true
                }
            }
        }
    }

    /// The changes once there are `count` (or the stream ended, or 30 s passed).
    func wait(for count: Int) async -> [ObjectChange<Model>] {
        _ = await eventually(within: 30) { state.withLock { $0.changes.count >= count || $0.ended } }
        return state.withLock { $0.changes }
    }

    /// The error the stream ended with (nil when it ended without one, or did not end in 30 s).
    func waitForEnd() async -> RoostError? {
        #expect(await eventually(within: 30) { state.withLock { $0.ended } })
        return state.withLock { $0.error }
    }
}

/// Each change as one word and the object's name (or the guid, when no object came).
func labels<Model>(_ changes: [ObjectChange<Model>], _ name: KeyPath<Model, String>) -> [String] {
    changes.map { change in
        switch change.kind {
        case .created(let object): "created " + object.value[keyPath: name]
        case .updated(let object): "updated " + object.value[keyPath: name]
        case .entered(let object): "entered " + object.value[keyPath: name]
        case .left(let guid): "left " + guid
        case .deleted(let guid): "deleted " + guid
        case .reset: "reset"
        }
    }
}

extension TestServer {
    /// Whether /metrics' `roost_event_streams` comes to `count` (within 10 s).
    func openEventStreams(becomes count: Int) async -> Bool {
        // Generous: on a machine busy with the whole parallel suite a stream can take seconds to open.
        await eventually(within: 30) {
            guard let metrics = try? await client.send("GET", "/metrics").text else { return false }
            return metrics.split(separator: "\n").contains("roost_event_streams \(count)")
        }
    }

    /// Creates a note with plain HTTP, not through the client under test.
    func createNote(_ text: String) async throws {
        let response = try await client.send("POST", "/ff/resources/Note", json: #"{"text":"\#(text)"}"#)
        guard response.status == 201 else { throw ProxyError() }
    }
}
