import Foundation
import RoostCore
import RoostSQLite
import RoostServer
import RoostStore
import RoostTestSupport
import Testing

/// `Idempotency-Key` on writes: one run per key and caller, the first answer replayed.
@Suite struct IdempotencyTests {
    private func server(clock: ManualWallClock = ManualWallClock()) async throws -> TestServer {
        try await TestServer { configuration in
            configuration.appDefinition = openRules
            configuration.clock = clock
            configuration.passwordHasher = PasswordHasher.cheapForTests()
        }
    }

    private func count(_ server: TestServer, _ collection: String) async throws -> Int {
        let response = try await server.client.send("GET", "/ff/resources/\(collection)")
        return (response.json["items"] as? [Any])?.count ?? -1
    }

    /// Anonymous callers have no user to scope keys by: each client address is its own scope, so
    /// one anonymous client never gets another's answer, while a client still gets its own.
    @Test func anonymousClientsNeverReplayEachOthersAnswers() async throws {
        let storage = try SQLiteStorage(directory: TestServer.makeTemporaryDirectory(), collections: .builtIn)
        let service = IdempotencyService(store: storage.idempotencyKeys, clock: ManualWallClock())
        let body = Array(#"{"text":"a"}"#.utf8)
        func begin(from address: String) async throws -> IdempotencyService.Decision {
            try await service.begin(
                key: "shared-key", caller: nil, clientAddress: address, method: "POST",
                target: "/ff/resources/Note", body: body)
        }
        guard case .run(let ticket) = try await begin(from: "192.0.2.1") else {
            Issue.record("the first request should run")
            return
        }
        let answer = RecordedResponse(status: 201, headers: [], body: Array(#"{"guid":"private"}"#.utf8))
        try await service.finish(ticket, with: answer)
        guard case .replay(let replayed) = try await begin(from: "192.0.2.1") else {
            Issue.record("the same client should get its answer again")
            return
        }
        #expect(replayed == answer)
        guard case .run(let other) = try await begin(from: "198.51.100.7") else {
            Issue.record("another anonymous client must not get the first one's answer")
            return
        }
        #expect(other.mark.scope == "anonymous@198.51.100.7")
        // A user's keys stay the user's, whatever the address.
        let user = Principal(userGuid: "u1", tokenId: "t1")
        guard
            case .run = try await service.begin(
                key: "shared-key", caller: user, clientAddress: "192.0.2.1", method: "POST",
                target: "/ff/resources/Note", body: body)
        else {
            Issue.record("a user's scope is not the address's")
            return
        }
    }

    @Test func aRepeatedCreateIsAnsweredFromTheFirstRun() async throws {
        let server = try await server()
        let key = [("Idempotency-Key", "k-1")]
        let first = try await server.client.send(
            "POST", "/ff/resources/Note", json: #"{"text":"a"}"#, headers: key)
        let second = try await server.client.send(
            "POST", "/ff/resources/Note", json: #"{"text":"a"}"#, headers: key)
        #expect(first.status == 201)
        #expect(second.status == 201)
        #expect(second.text == first.text)
        #expect(second.header("Location") == first.header("Location"))
        #expect(second.header("ETag") == "\"1\"")
        #expect(second.header("Idempotent-Replayed") == "true")
        #expect(first.header("Idempotent-Replayed") == nil)
        #expect(try await count(server, "Note") == 1)
        // Without a key, the same body is a second object.
        _ = try await server.client.send("POST", "/ff/resources/Note", json: #"{"text":"a"}"#)
        #expect(try await count(server, "Note") == 2)
    }

    @Test func aKeyReusedForAnotherRequestIsRefused() async throws {
        let server = try await server()
        let key = [("Idempotency-Key", "k-2")]
        _ = try await server.client.send("POST", "/ff/resources/Note", json: #"{"text":"a"}"#, headers: key)
        for (method, path, body) in [
            ("POST", "/ff/resources/Note", #"{"text":"b"}"#),
            ("POST", "/ff/resources/Other", #"{"text":"a"}"#),
        ] {
            let response = try await server.client.send(method, path, json: body, headers: key)
            #expect(response.status == 422)
            #expect(response.json["code"] as? String == "idempotency_key_reused")
        }
        #expect(try await count(server, "Note") == 1)
        #expect(try await count(server, "Other") == 0)
    }

    @Test func keysBelongToTheirCaller() async throws {
        let server = try await server()
        let token = try #require(try await server.client.register("alice").json["token"] as? String)
        let key = ("Idempotency-Key", "shared-key")
        let anonymous = try await server.client.send(
            "POST", "/ff/resources/Note", json: #"{"text":"a"}"#, headers: [key])
        let alice = try await server.client.send(
            "POST", "/ff/resources/Note", json: #"{"text":"a"}"#, headers: [key, ("X-Token", token)])
        #expect(anonymous.status == 201)
        #expect(alice.status == 201)
        #expect(alice.header("Idempotent-Replayed") == nil)
        #expect(alice.json["guid"] as? String != anonymous.json["guid"] as? String)
        #expect(try await count(server, "Note") == 2)
    }

    @Test(arguments: ["", String(repeating: "k", count: 256), "has space", "caf\u{e9}"])
    func badKeysAreRefusedBeforeAnythingRuns(key: String) async throws {
        let server = try await server()
        let response = try await server.client.send(
            "POST", "/ff/resources/Note", json: #"{"text":"a"}"#, headers: [("Idempotency-Key", key)])
        #expect(response.status == 400)
        #expect(response.json["code"] as? String == "invalid_idempotency_key")
        #expect(try await count(server, "Note") == 0)
    }

    @Test func clientErrorsAndDeletesReplayToo() async throws {
        let server = try await server()
        let created = try await server.client.send("POST", "/ff/resources/Note", json: #"{"text":"a"}"#)
        let path = "/ff/resources/Note/\(created.json["guid"] as! String)"
        let stale = [("Idempotency-Key", "patch-1"), ("If-Match", "\"7\"")]
        let refused = try await server.client.send("PATCH", path, json: #"{"text":"b"}"#, headers: stale)
        let again = try await server.client.send("PATCH", path, json: #"{"text":"b"}"#, headers: stale)
        #expect(refused.status == 412)
        #expect(again.status == 412)
        #expect(again.text == refused.text)
        #expect(again.header("Idempotent-Replayed") == "true")

        let patchKey = [("Idempotency-Key", "patch-2")]
        _ = try await server.client.send("PATCH", path, json: #"{"n":1}"#, headers: patchKey)
        let replayedPatch = try await server.client.send("PATCH", path, json: #"{"n":1}"#, headers: patchKey)
        #expect(
            replayedPatch.json["version"] as? Int == 2, "a replayed patch does not bump the version again")
        #expect(try await server.client.send("GET", path).json["version"] as? Int == 2)

        let deleteKey = [("Idempotency-Key", "delete-1")]
        let deleted = try await server.client.send("DELETE", path, headers: deleteKey)
        let deletedAgain = try await server.client.send("DELETE", path, headers: deleteKey)
        #expect(deleted.status == 204)
        #expect(deletedAgain.status == 204)
        #expect(try await server.client.send("DELETE", path).status == 404)
    }

    @Test func keysExpireAfterADay() async throws {
        let clock = ManualWallClock()
        let server = try await server(clock: clock)
        let key = [("Idempotency-Key", "daily")]
        _ = try await server.client.send("POST", "/ff/resources/Note", json: #"{"text":"a"}"#, headers: key)
        clock.advance(seconds: 24 * 60 * 60 - 1)
        _ = try await server.client.send("POST", "/ff/resources/Note", json: #"{"text":"a"}"#, headers: key)
        #expect(try await count(server, "Note") == 1)
        clock.advance(seconds: 2)
        let late = try await server.client.send(
            "POST", "/ff/resources/Note", json: #"{"text":"a"}"#, headers: key)
        #expect(late.header("Idempotent-Replayed") == nil)
        #expect(try await count(server, "Note") == 2)
    }

    /// A run that died with its process (reserved, never finished) blocks its key for two
    /// minutes, then the key runs again.
    @Test func anAbandonedRunIsRetriedAfterTwoMinutes() async throws {
        let clock = ManualWallClock()
        let server = try await server(clock: clock)
        let store = try await TestBackend.openStorage(for: server.dataDirectory).idempotencyStore
        let body = Array(#"{"text":"a"}"#.utf8)
        let fingerprint = IdempotencyService.fingerprint(
            method: "POST", target: "/ff/resources/Note", body: body)
        let now = clock.nowMilliseconds()
        #expect(
            try await store.reserve(
                scope: "anonymous@127.0.0.1", key: "crashed", fingerprint: fingerprint, now: now,
                expiredBefore: 0,
                abandonedBefore: 0) == .reserved)
        let key = [("Idempotency-Key", "crashed")]
        let blocked = try await server.client.send(
            "POST", "/ff/resources/Note", json: #"{"text":"a"}"#, headers: key)
        #expect(blocked.status == 409)
        #expect(blocked.json["code"] as? String == "idempotency_key_in_use")
        clock.advance(seconds: 121)
        let retried = try await server.client.send(
            "POST", "/ff/resources/Note", json: #"{"text":"a"}"#, headers: key)
        #expect(retried.status == 201)
        #expect(try await count(server, "Note") == 1)
    }

    /// The write commits with its key marked in the same transaction, then the process dies
    /// before recording the answer: a resend must not run it again.
    @Test func aWriteThatCommittedButLostItsAnswerIsNotRunAgain() async throws {
        let clock = ManualWallClock()
        let server = try await server(clock: clock)
        let created = try await server.client.send("POST", "/ff/resources/Note", json: #"{"n":1}"#)
        let guid = try #require(created.json["guid"] as? String)
        let path = "/ff/resources/Note/\(guid)"
        let storage = try await TestBackend.openStorage(for: server.dataDirectory)
        let (keys, objects) = (storage.idempotencyStore, storage.objectStore)
        let body = Array(#"{"n":2}"#.utf8)
        #expect(
            try await keys.reserve(
                scope: "anonymous@127.0.0.1", key: "lost-answer",
                fingerprint: IdempotencyService.fingerprint(method: "PATCH", target: path, body: body),
                now: clock.nowMilliseconds(), expiredBefore: 0, abandonedBefore: 0) == .reserved)
        var next = try #require(try await objects.object(in: "Note", guid: guid))
        next.version += 1
        try await objects.update(
            next, expectedVersion: next.version - 1,
            marking: IdempotencyMark(scope: "anonymous@127.0.0.1", key: "lost-answer"))
        let headers = [("Idempotency-Key", "lost-answer")]
        let running = try await server.client.send("PATCH", path, json: #"{"n":2}"#, headers: headers)
        #expect(running.json["code"] as? String == "idempotency_key_in_use")
        clock.advance(seconds: 121)
        for _ in 0..<2 {
            let resent = try await server.client.send("PATCH", path, json: #"{"n":2}"#, headers: headers)
            #expect(resent.status == 409)
            #expect(resent.json["code"] as? String == "idempotency_key_lost_answer")
        }
        let stored = try await objects.object(in: "Note", guid: guid)
        #expect(stored?.version == 2, "the write ran once")
    }

    /// A write refused inside its transaction leaves the key unmarked, so it can run again.
    /// (It reads SQLite's table itself.)
    @Test(.enabled(if: TestBackend.isSQLite)) func aRefusedWriteDoesNotMarkItsKey() async throws {
        let server = try await server()
        let created = try await server.client.send("POST", "/ff/resources/Note", json: #"{"n":1}"#)
        let path = "/ff/resources/Note/\(created.json["guid"] as! String)"
        _ = try await server.client.send(
            "PATCH", path, json: #"{"n":2}"#,
            headers: [("Idempotency-Key", "refused"), ("If-Match", "\"9\"")])
        let database = try SQLiteDatabase(path: server.dataDirectory + "/roost.sqlite", migrations: [])
        let ran = try database.read {
            try $0.first("SELECT ran FROM idempotency_keys WHERE key = 'refused'") { $0.integer(0) }
        }
        #expect(ran == 0)
        let applied = try await server.client.send(
            "PATCH", path, json: #"{"n":2}"#, headers: [("Idempotency-Key", "applied")])
        #expect(applied.status == 200)
        let marked = try database.read {
            try $0.first("SELECT ran FROM idempotency_keys WHERE key = 'applied'") { $0.integer(0) }
        }
        #expect(marked == 1)
    }

    @Test func concurrentRepeatsRunOnce() async throws {
        let server = try await server()
        let statuses = try await withThrowingTaskGroup(of: (Int, String).self) { group in
            for _ in 0..<8 {
                group.addTask {
                    let response = try await server.client.send(
                        "POST", "/ff/resources/Note", json: #"{"text":"same"}"#,
                        headers: [("Idempotency-Key", "race")])
                    return (response.status, response.json["code"] as? String ?? "")
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(statuses.allSatisfy { $0 == (201, "") || $0 == (409, "idempotency_key_in_use") })
        #expect(statuses.contains { $0.0 == 201 })
        #expect(try await count(server, "Note") == 1)
    }

    @Test func computedAnswersRevalidateWithTheirETag() async throws {
        let server = try await server()
        _ = try await server.client.send("POST", "/ff/resources/Note", json: #"{"text":"a"}"#)
        let page = try await server.client.send("GET", "/ff/resources/Note")
        let tag = try #require(page.header("ETag"))
        #expect(tag.hasPrefix("W/\""))
        let unchanged = try await server.client.send(
            "GET", "/ff/resources/Note", headers: [("If-None-Match", tag)])
        #expect(unchanged.status == 304)
        #expect(unchanged.body.isEmpty)
        #expect(unchanged.header("ETag") == tag)
        _ = try await server.client.send("POST", "/ff/resources/Note", json: #"{"text":"b"}"#)
        let changed = try await server.client.send(
            "GET", "/ff/resources/Note", headers: [("If-None-Match", tag)])
        #expect(changed.status == 200)
        #expect(changed.header("ETag") != tag)
        let query = try await server.client.send("GET", "/ff/resources/Note/(text%20eq%20'a')")
        let queryTag = try #require(query.header("ETag"))
        #expect(
            try await server.client.send(
                "GET", "/ff/resources/Note/(text%20eq%20'a')", headers: [("If-None-Match", queryTag)]
            ).status == 304)
    }
}
