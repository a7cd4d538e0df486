import Foundation
import RoostCore
import RoostPostgres
import RoostQuery
import RoostStore
import RoostTestSupport
import Testing

/// Accounts, tokens, groups and idempotency keys on both backends, and what instances sharing one
/// PostgreSQL database must agree on.
@Suite("Accounts and idempotency keys on both backends")
struct PostgresStoreAccountTests {
    static func account(_ guid: String, _ name: String, email: String? = nil) -> AccountRecord {
        AccountRecord(userGuid: guid, userNameKey: name, emailKey: email, passwordHash: "hash-" + guid)
    }

    static func token(_ id: String, user: String, device: String = "d", at time: Int64) -> TokenRecord {
        TokenRecord(
            id: id, userGuid: user, secretHash: Array("secret-\(id)".utf8), deviceId: device,
            deviceType: "ios",
            createdAt: time, expiresAt: time + 1000, renewedAt: time, clientAddress: "10.0.0.1")
    }

    @Test(
        "accounts: conflicts by name and email, lookups, tokens and their revocations",
        arguments: Backend.allCases)
    func accountsAndTokens(_ backend: Backend) async throws {
        try await withStorage(backend) { storage in
            let accounts = storage.accountStore
            try await accounts.createAccount(
                Self.account("u1", "alice", email: "a@x"), user: object("FFUser", "u1"))
            await #expect(throws: AccountConflict.userName) {
                try await accounts.createAccount(Self.account("u2", "alice"), user: object("FFUser", "u2"))
            }
            await #expect(throws: AccountConflict.email) {
                try await accounts.createAccount(
                    Self.account("u2", "bob", email: "a@x"), user: object("FFUser", "u2"))
            }
            #expect(try await storage.objectStore.object(in: "FFUser", guid: "u2") == nil)
            #expect(try await accounts.account(identifiedBy: "a@x")?.userGuid == "u1")
            #expect(try await accounts.account(userGuid: "u1")?.userNameKey == "alice")
            for (index, id) in ["t1", "t2", "t3"].enumerated() {
                try await accounts.issue(
                    Self.token(id, user: "u1", at: Int64(index)), revoking: .none, manufacturerId: nil)
            }
            try await accounts.issue(
                Self.token("t4", user: "u1", at: 10), revoking: .sameDeviceBeyond(1), manufacturerId: "m")
            #expect(try await accounts.tokens(userGuid: "u1").map(\.id) == ["t4", "t3"])
            let t4 = try await accounts.token(secretHash: Array("secret-t4".utf8))
            #expect(t4 == Self.token("t4", user: "u1", at: 10))
            try await accounts.renewToken(id: "t4", expiresAt: 5000, renewedAt: 20)
            #expect(try await accounts.token(id: "t4")?.expiresAt == 5000)
            try await accounts.updatePasswordHash(
                userGuid: "u1", hash: "new", revoking: .allExcept(tokenId: "t4"))
            #expect(try await accounts.tokens(userGuid: "u1").map(\.id) == ["t4"])
            #expect(try await accounts.deleteToken(id: "t4"))
            #expect(try await accounts.deleteToken(id: "t4") == false)
            #expect(try await accounts.deleteAccount(userGuid: "u1"))
            #expect(try await storage.objectStore.object(in: "FFUser", guid: "u1") == nil)
            #expect(try await accounts.deleteAccount(userGuid: "u1") == false)
        }
    }

    @Test(
        "concurrent logins that replace the device's token (or all tokens) leave one token",
        arguments: Backend.allCases)
    func concurrentLoginsLeaveOne(_ backend: Backend) async throws {
        try await withStorage(backend) { storage in
            let accounts = storage.accountStore
            try await accounts.createAccount(Self.account("u1", "alice"), user: object("FFUser", "u1"))
            for revocation in [TokenRevocation.sameDevice, .allDevices, .sameDeviceBeyond(0)] {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for index in 0..<16 {
                        group.addTask {
                            try await accounts.issue(
                                Self.token(
                                    "\(revocation)-\(index)", user: "u1", device: "watch", at: Int64(index)),
                                revoking: revocation, manufacturerId: nil)
                        }
                    }
                    try await group.waitForAll()
                }
                #expect(try await accounts.tokens(userGuid: "u1").count == 1, "\(revocation)")
            }
        }
    }

    @Test("deactivating a user deletes their tokens in the same write", arguments: Backend.allCases)
    func deactivationRevokes(_ backend: Backend) async throws {
        try await withStorage(backend) { storage in
            let user = object("FFUser", "u1", document: #"{"guid":"u1","active":true}"#)
            try await storage.accountStore.createAccount(Self.account("u1", "alice"), user: user)
            try await storage.accountStore.issue(
                Self.token("t1", user: "u1", at: 1), revoking: .none, manufacturerId: nil)
            var inactive = user
            inactive.document = Array(#"{"guid":"u1","active":false}"#.utf8)
            inactive.version = 2
            try await storage.objectStore.update(inactive, expectedVersion: 1)
            #expect(try await storage.accountStore.tokens(userGuid: "u1").isEmpty)
        }
    }

    @Test(
        "groups: a deleted guid stays retired; ensureGroups replaces squatted groups only",
        arguments: Backend.allCases)
    func groups(_ backend: Backend) async throws {
        try await withStorage(backend) { storage in
            let store = storage.objectStore
            try await store.insert(object("FFUser", "admin", document: #"{"guid":"admin","admin":true}"#))
            try await store.insert(object("FFUserGroup", "old"))
            try await store.delete(in: "FFUserGroup", guid: "old", expectedVersion: 1)
            #expect(await storeError { try await store.insert(object("FFUserGroup", "old")) } == .duplicate)
            try await store.insert(object("FFUserGroup", "squat", createdBy: "mallory"))
            try await store.insert(object("FFUserGroup", "kept", createdBy: "admin"))
            let declared = ["squat", "kept", "old", "new"].map {
                object("FFUserGroup", $0, document: #"{"guid":"\#($0)","users":[]}"#)
            }
            #expect(
                try await storage.accountStore.ensureGroups(
                    declared, replacingWhen: AccountService.isSquatted) == ["squat"])
            #expect(try await store.object(in: "FFUserGroup", guid: "squat")?.createdBy == nil)
            #expect(try await store.object(in: "FFUserGroup", guid: "kept")?.createdBy == "admin")
            #expect(try await store.object(in: "FFUserGroup", guid: "old") != nil)
            #expect(try await store.object(in: "FFUserGroup", guid: "new") != nil)
        }
    }

    @Test(
        "idempotency keys: reserve, replay, mismatch, in progress, and a write that ran without its answer",
        arguments: Backend.allCases)
    func idempotency(_ backend: Backend) async throws {
        try await withStorage(backend) { storage in
            let keys = storage.idempotencyStore
            func reserve(_ key: String, _ fingerprint: String, now: Int64 = 100, abandonedBefore: Int64 = 0)
                async throws
                -> IdempotencyReservation
            {
                try await keys.reserve(
                    scope: "u1", key: key, fingerprint: Array(fingerprint.utf8), now: now, expiredBefore: 0,
                    abandonedBefore: abandonedBefore)
            }
            #expect(try await reserve("k", "f") == .reserved)
            #expect(try await reserve("k", "f") == .inProgress)
            #expect(try await reserve("k", "other") == .mismatch)
            let response = RecordedResponse(
                status: 201, headers: [("ETag", "\"1\""), ("Location", "/x")], body: [1, 2])
            try await keys.complete(scope: "u1", key: "k", response: response)
            #expect(try await reserve("k", "f") == .completed(response))
            #expect(try await reserve("w", "f") == .reserved)
            try await storage.objectStore.insert(
                object("Post", "p"), marking: IdempotencyMark(scope: "u1", key: "w"))
            #expect(try await reserve("w", "f", now: 200, abandonedBefore: 150) == .ranWithoutAnswer)
            try await keys.release(scope: "u1", key: "w")
            #expect(try await reserve("w", "f") == .reserved)
            #expect(try await keys.purge(createdBefore: 150) == 2)
        }
    }

    @Test("two instances reserving one key at once: exactly one runs it")
    func concurrentReservationAcrossInstances() async throws {
        try await PostgresTestDatabase.with { test in
            let first = try PostgresStorage(configuration: test.configuration, collections: .builtIn)
            let second = try PostgresStorage(configuration: test.configuration, collections: .builtIn)
            let outcomes = try await withThrowingTaskGroup(of: IdempotencyReservation.self) { group in
                for index in 0..<20 {
                    let storage = index % 2 == 0 ? first : second
                    group.addTask {
                        try await storage.idempotencyKeys.reserve(
                            scope: "u", key: "same", fingerprint: [1], now: 100, expiredBefore: 0,
                            abandonedBefore: 0)
                    }
                }
                return try await group.reduce(into: [IdempotencyReservation]()) { $0.append($1) }
            }
            await first.close()
            await second.close()
            #expect(outcomes.filter { $0 == .reserved }.count == 1)
            #expect(outcomes.filter { $0 == .inProgress }.count == 19)
        }
    }
}
