import Foundation
import RoostClient
import Testing

/// `changes(of:)` on scripted event streams: each scripted answer is one connection, which ends
/// after its body, so reconnection, resuming and endings run without a server.
@Suite struct ChangeStreamUnitTests {
    static let owner = Credential(token: "secret", userGuid: "u1", userName: "al")

    static func stream(_ body: String) -> Result<TransportResponse, RoostError> {
        .success(
            TransportResponse(
                status: 200, headers: ["Content-Type": "text/event-stream; charset=utf-8"],
                body: Data(body.utf8)))
    }

    func client(_ transport: ScriptedTransport, bufferLimit: Int = 1000) throws -> Roost {
        try makeUnitClient(transport, credential: Self.owner) { configuration in
            configuration.reconnectDelay = 0.001
            configuration.maxReconnectDelay = 0.005
            configuration.changeBufferLimit = bufferLimit
        }
    }

    @Test func resumesAfterTheLastPositionAndEndsWithTheServersRefusal() async throws {
        let transport = ScriptedTransport([
            Self.stream(
                "retry: 3000\nid: 7\n: subscribed\n\nid: 8\nevent: create\ndata: \(objectJSON("n1", #""text":"a""#))\n\n"
            ),
            ScriptedTransport.unreachable,
            // CRLF line ends, a document split over data lines, a heartbeat, an unknown event.
            Self.stream(
                "id: 9\r\nevent: update\r\ndata: {\"guid\":\"n1\",\"ffUrl\":\"/ff/resources/Note/n1\",\"createdBy\":null,\r\ndata: \"createdAt\":1,\"updatedBy\":null,\"updatedAt\":2,\"version\":2,\"text\":\"b\"}\r\n\r\n: heartbeat\r\nid: 12\r\n\r\nid: 13\r\nevent: future\r\ndata: {}\r\n\r\n"
            ),
            Self.stream(
                "id: 40\nevent: reset\ndata: {\"reason\":\"r\",\"last\":40,\"oldest\":30}\n\nid: 41\nevent: delete\ndata: {\"guid\":\"n2\",\"ffUrl\":\"/ff/resources/Note/n2\"}\n\nid: 42\nevent: leave\ndata: {\"guid\":\"n3\",\"ffUrl\":\"/ff/resources/Note/n3\"}\n\n: the token was revoked; log in again\n\n"
            ),
            errorJSON(401, "invalid_token"),
        ])
        let client = try client(transport)
        var seen: [String] = []
        var positions: [Int64] = []
        do {
            for try await change in client.changes(of: Note.self, after: 5) {
                positions.append(change.position)
                switch change.kind {
                case .created(let note): seen.append("created \(note.text)")
                case .updated(let note): seen.append("updated \(note.text) v\(note.metadata.version)")
                case .entered(let note): seen.append("entered \(note.text)")
                case .left(let guid): seen.append("left \(guid)")
                case .deleted(let guid): seen.append("deleted \(guid)")
                case .reset: seen.append("reset")
                }
            }
            Issue.record("the stream ended without the server's refusal")
        } catch let error as RoostError {
            #expect(error.status == 401)
            #expect(error.code == "invalid_token")
        }
        #expect(seen == ["created a", "updated b v2", "reset", "deleted n2", "left n3"])
        #expect(positions == [8, 9, 40, 41, 42])
        let requests = transport.requests
        #expect(requests.map(\.path) == Array(repeating: "/ff/events?collection=Note", count: 5))
        #expect(requests.map { $0.headers["Last-Event-ID"] } == ["5", "8", "8", "13", "42"])
        #expect(requests.allSatisfy { $0.headers["Authorization"] == "Bearer secret" })
        #expect(requests.allSatisfy { $0.headers["Accept"] == "text/event-stream" })
        #expect(await !client.isLoggedIn, "a refused token is forgotten")
    }

    @Test func aFullBufferDisconnectsAndResumesFromTheLastChangeHeld() async throws {
        func created(_ id: Int) -> String {
            "id: \(id)\nevent: create\ndata: \(objectJSON("n\(id)", #""text":"\#(id)""#))\n\n"
        }
        let transport = ScriptedTransport([
            Self.stream(created(1) + created(2) + created(3) + created(4)),
            Self.stream(created(3) + created(4)),
            errorJSON(403, "forbidden"),
        ])
        let gate = Gate()
        var configuration = RoostConfiguration(
            serverURL: URL(string: "http://127.0.0.1:9")!,
            storageFolder: NSTemporaryDirectory() + "roost-unit-" + UUID().uuidString,
            credentialStore: InMemoryCredentialStore(Self.owner),
            transport: GatedTransport(transport, gate: gate))
        configuration.deliversInBackground = false
        configuration.reconnectDelay = 0.001
        configuration.changeBufferLimit = 2
        let client = try Roost(configuration: configuration)
        var changes = client.changes(of: Note.self).makeAsyncIterator()
        // Nothing is read until the third change found the buffer full and the stream reconnects.
        #expect(await gate.waitForSomeoneWaiting())
        var texts: [String] = []
        for _ in 0..<2 { texts.append(try await changes.next()?.object?.text ?? "?") }
        gate.open()
        do {
            while let change = try await changes.next() { texts.append(change.object?.text ?? "?") }
            Issue.record("the stream ended without the server's refusal")
        } catch let error as RoostError {
            #expect(error.code == "forbidden")
        }
        #expect(texts == ["1", "2", "3", "4"])
        #expect(transport.requests.map { $0.headers["Last-Event-ID"] } == [nil, "2", "4"])
    }

    @Test func theLoginHandlerLogsTheSameUserBackInAndTheStreamGoesOn() async throws {
        let transport = ScriptedTransport([
            errorJSON(401, "invalid_token"),
            ScriptedTransport.json(200, #"{"user":{"guid":"u1","userName":"al"},"token":"fresh"}"#),
            Self.stream("id: 4\nevent: create\ndata: \(objectJSON("n1", #""text":"a""#))\n\n"),
            errorJSON(403, "forbidden"),
        ])
        let client = try client(transport)
        await client.setLoginHandler { _ in (try? await client.login(userName: "al", password: "pw")) != nil }
        var texts: [String] = []
        do {
            for try await change in client.changes(of: Note.self) { texts.append(change.object?.text ?? "?") }
        } catch let error as RoostError {
            #expect(error.code == "forbidden")
        }
        #expect(texts == ["a"])
        let requests = transport.requests
        #expect(
            requests.map(\.path) == [
                "/ff/events?collection=Note", "/ff/login", "/ff/events?collection=Note",
                "/ff/events?collection=Note",
            ])
        #expect(requests[0].headers["Authorization"] == "Bearer secret")
        #expect(requests[2].headers["Authorization"] == "Bearer fresh")
        #expect(requests[3].headers["Last-Event-ID"] == "4")
    }

    @Test func aLoginHandlerThatLogsNobodyInIsAskedOnce() async throws {
        let transport = ScriptedTransport([
            errorJSON(401, "login_required"), errorJSON(401, "login_required"),
        ])
        let client = try makeUnitClient(transport) { $0.reconnectDelay = 0.001 }
        let asked = Guarded(0)
        await client.setLoginHandler { _ in
            asked.withLock { $0 += 1 }
            return true
        }
        do {
            for try await _ in client.changes(of: Note.self) { Issue.record("a change came from a refusal") }
            Issue.record("the stream ended without the refusal")
        } catch let error as RoostError {
            #expect(error.status == 401)
            #expect(error.code == "login_required")
        }
        #expect(asked.withLock { $0 } == 1)
        #expect(transport.requests.count == 2)
        #expect(transport.requests.allSatisfy { $0.headers["Authorization"] == nil })
    }

    @Test func aQueryIsSentEscapedAndAnUndecodableObjectIsNamed() async throws {
        let transport = ScriptedTransport([
            Self.stream("id: 3\nevent: create\ndata: \(objectJSON("odd", #""text":5"#))\n\n")
        ])
        let client = try client(transport)
        let query = client.query(Note.self).where("text", .eq, "O'Brien & co")
        do {
            for try await _ in query.changes() { Issue.record("an undecodable object was delivered") }
            Issue.record("the stream ended without an error")
        } catch let error as RoostError {
            #expect(error.code == "decoding_failed")
            #expect(error.details["guid"] == .string("odd"))
            #expect(error.details["field"] == .string("text"))
        }
        let path = try #require(transport.requests.first?.path)
        #expect(path == "/ff/events?collection=Note&query=%28text%20eq%20%27O%27%27Brien%20%26%20co%27%29")
        #expect(transport.requests.count == 1, "a decoding failure is not retried")
    }

    @Test func anInvalidFieldNameFailsTheStreamWithoutARequest() async throws {
        let transport = ScriptedTransport([])
        let client = try client(transport)
        do {
            for try await _ in client.query(Note.self).where("te xt", .eq, "a").changes() {}
            Issue.record("an invalid field name was sent")
        } catch let error as RoostError {
            #expect(error.code == "invalid_query")
        }
        #expect(transport.requests.isEmpty)
    }
}

/// Holds every request after the first until opened.
final class Gate: Sendable {
    private let state = Guarded<(open: Bool, waiting: [CheckedContinuation<Void, Never>])>((false, []))

    func pass() async {
        await withCheckedContinuation { continuation in
            let passes = state.withLock { state in
                if !state.open { state.waiting.append(continuation) }
                return state.open
            }
            if passes { continuation.resume() }
        }
    }

    func open() {
        let waiting = state.withLock { state in
            state.open = true
            defer { state.waiting = [] }
            return state.waiting
        }
        for continuation in waiting { continuation.resume() }
    }

    /// Whether a request comes to wait at the gate within 10 s.
    func waitForSomeoneWaiting() async -> Bool {
        for _ in 0..<1000 {
            if state.withLock({ !$0.waiting.isEmpty }) { return true }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return false
    }
}

/// A scripted transport whose requests after the first wait at a gate.
final class GatedTransport: Transport {
    let inner: ScriptedTransport
    let gate: Gate
    private let count = Guarded(0)

    init(_ inner: ScriptedTransport, gate: Gate) {
        self.inner = inner
        self.gate = gate
    }

    func send(_ request: TransportRequest) async throws -> TransportResponse {
        let index = count.withLock { count in
            defer { count += 1 }
            return count
        }
        if index > 0 { await gate.pass() }
        return try await inner.send(request)
    }
}
