import Foundation
import RoostClient
import Testing

/// The client against scripted answers: retry timing, headers and token handling without a server.
@Suite struct ClientUnitTests {
    static let created =
        #"{"guid":"g1","ffUrl":"/ff/resources/Note/g1","createdBy":"u1","createdAt":1,"updatedBy":"u1","updatedAt":1,"version":1,"text":"a"}"#

    func client(
        _ transport: ScriptedTransport, credential: Credential? = nil,
        tokenHeader: TokenHeader = .authorizationBearer
    )
        throws -> (Roost, InMemoryCredentialStore)
    {
        let store = InMemoryCredentialStore(credential)
        var configuration = RoostConfiguration(
            serverURL: URL(string: "http://127.0.0.1:9")!,
            storageFolder: NSTemporaryDirectory() + "roost-unit-" + UUID().uuidString, credentialStore: store,
            transport: transport)
        configuration.deliversInBackground = false
        configuration.retryInterval = 0.05
        configuration.offlineRetryInterval = 0.1
        configuration.tokenHeader = tokenHeader
        return (try Roost(configuration: configuration), store)
    }

    func serverError(_ status: Int, _ code: String) -> Result<TransportResponse, RoostError> {
        ScriptedTransport.json(status, #"{"status":\#(status),"code":"\#(code)","message":"m","details":{}}"#)
    }

    @Test func retriesWaitLongerWhileTheServerIsUnreachable() async throws {
        let transport = ScriptedTransport([
            ScriptedTransport.unreachable, serverError(503, "unavailable"),
            .success(
                TransportResponse(
                    status: 429, headers: ["Retry-After": "2"],
                    body: Data(#"{"code":"too_many_attempts","message":"m"}"#.utf8))),
            ScriptedTransport.json(201, Self.created, headers: ["ETag": "\"1\""]),
        ])
        let (client, _) = try client(
            transport, credential: Credential(token: "secret", userGuid: "u1", userName: "al"))
        let outcome = try await client.create(Note(text: "a"), guid: "g1", policy: .queueWhenOffline)
        guard case .queued(let operation) = outcome else {
            Issue.record("delivered while unreachable")
            return
        }
        #expect(await client.flush().state == .retrying(after: 0.05))
        #expect(await client.flush().state == .retrying(after: 2))
        #expect(await client.flush() == FlushResult(delivered: 1, failed: 0, state: .idle))

        // Every attempt was the same request: same key, same body, the owner's token.
        let attempts = transport.requests
        #expect(attempts.count == 4)
        #expect(Set(attempts.map { $0.headers["Idempotency-Key"] }) == [operation.id])
        #expect(attempts.allSatisfy { $0.method == "POST" && $0.path == "/ff/resources/Note" })
        #expect(attempts.allSatisfy { $0.headers["Authorization"] == "Bearer secret" })
        #expect(Set(attempts.map(\.body)).count == 1)
        let body = try JSONDecoder().decode(JSON.self, from: try #require(attempts[0].body))
        #expect(body == ["guid": "g1", "text": "a"])
    }

    @Test func updatesSendOnlyTheChangedFieldsWithTheVersionTheyExpect() async throws {
        let transport = ScriptedTransport([
            ScriptedTransport.json(
                200,
                Self.created.replacingOccurrences(of: "\"version\":1", with: "\"version\":2")
                    .replacingOccurrences(of: "\"text\":\"a\"", with: "\"text\":\"b\",\"extra\":1"))
        ])
        let (client, _) = try client(transport)
        // A field the model does not know ("extra") is never sent, so never removed.
        var stored = try JSONDecoder().decode(
            Stored<Note>.self,
            from: Data(
                Self.created.replacingOccurrences(of: "\"version\"", with: "\"extra\":1,\"version\"").utf8))
        let unchanged = try await client.update(stored)
        #expect(transport.requests.isEmpty, "nothing changed, nothing sent")
        #expect(unchanged.metadata.version == 1)
        stored.text = "b"
        stored.count = 3
        let updated = try await client.update(stored)
        #expect(updated.metadata.version == 2)
        #expect(client.metadata(for: updated).version == 2)
        let request = try #require(transport.requests.first)
        #expect(request.method == "PATCH")
        #expect(request.path == "/ff/resources/Note/g1")
        #expect(request.headers["If-Match"] == "\"1\"")
        #expect(request.headers["Authorization"] == nil, "anonymous")
        // Only the changed fields; metadata never goes back to the server.
        #expect(
            try JSONDecoder().decode(JSON.self, from: try #require(request.body)) == [
                "text": "b", "count": 3,
            ])
    }

    @Test func anObjectTheAppBuiltIsReplacedWhole() async throws {
        let transport = ScriptedTransport([
            ScriptedTransport.json(
                200, Self.created.replacingOccurrences(of: "\"version\":1", with: "\"version\":2"))
        ])
        let (client, _) = try client(transport)
        let read = try JSONDecoder().decode(Stored<Note>.self, from: Data(Self.created.utf8))
        _ = try await client.update(Stored(value: Note(text: "a"), metadata: read.metadata))
        let request = try #require(transport.requests.first)
        #expect(request.method == "PUT")
        #expect(request.headers["If-Match"] == "\"1\"")
        #expect(try JSONDecoder().decode(JSON.self, from: try #require(request.body)) == ["text": "a"])
    }

    @Test func aRefusedTokenIsForgottenAndTheHeaderIsConfigurable() async throws {
        let transport = ScriptedTransport([serverError(401, "invalid_token")])
        let (client, store) = try client(
            transport, credential: Credential(token: "old", userGuid: "u1", userName: "al"),
            tokenHeader: .xToken)
        #expect(await client.currentUser?.userName == "al")
        do {
            _ = try await client.fetch(Note.self, guid: "g1", cachePolicy: .networkOnly)
            Issue.record("a 401 was not thrown")
        } catch let error as RoostError {
            #expect(error.code == "invalid_token")
            #expect(error.needsLogin)
        }
        #expect(transport.requests.first?.headers["X-Token"] == "old")
        #expect(transport.requests.first?.headers["Authorization"] == nil)
        #expect(store.load() == nil)
        #expect(await client.currentUser == nil)
    }

    @Test func aWriteWhoseAnswerTheServerLostIsReadBack() async throws {
        let transport = ScriptedTransport([
            serverError(409, "idempotency_key_lost_answer"),
            ScriptedTransport.json(
                200, Self.created.replacingOccurrences(of: "\"version\":1", with: "\"version\":2")),
        ])
        let (client, _) = try client(transport)
        let outcome = try await client.patch(Note.self, guid: "g1", ["text": "a"], policy: .queueWhenOffline)
        #expect(outcome.stored?.metadata.version == 2)
        #expect(await client.pendingOperations.isEmpty)
        #expect(transport.requests.map(\.method) == ["PATCH", "GET"])
    }

    @Test func aNonRoostAnswerIsReportedAsSuch() async throws {
        let transport = ScriptedTransport([ScriptedTransport.json(502, "<html>Bad gateway</html>")])
        let (client, _) = try client(transport)
        do {
            _ = try await client.fetch(Note.self, guid: "g1", cachePolicy: .networkOnly)
            Issue.record("HTML decoded")
        } catch let error as RoostError {
            #expect(error.status == 502)
            #expect(error.code == "invalid_response")
            #expect(error.isTransient)
        }
    }
}
