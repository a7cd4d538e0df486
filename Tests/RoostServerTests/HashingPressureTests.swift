import Foundation
import RoostCore
import RoostTestSupport
import Synchronization
import Testing

/// Argon2id primitives whose verification waits at a gate the test opens, noting whether it ran
/// on the hashing workers.
final class GatedVerification: Sendable {
    let gate = DispatchSemaphore(value: 0)
    let entered = Atomic<Int>(0)
    let onWorkers = Mutex<[Bool]>([])
    let workers: BackgroundWorkers

    init(workers: BackgroundWorkers) { self.workers = workers }

    var primitives: PasswordHasher.Primitives {
        PasswordHasher.Primitives(
            hash: PasswordHasher.Primitives.libsodium.hash,
            verify: { [self] password, hash in
                onWorkers.withLock { $0.append(workers.isCurrentThreadAWorker) }
                entered.add(1, ordering: .relaxed)
                gate.wait()
                return PasswordHasher.Primitives.libsodium.verify(password, hash)
            })
    }
}

/// Argon2id primitives that fail as if their memory could not be allocated, once told to.
final class FailingAllocation: Sendable {
    let failing = Atomic<Bool>(false)

    var primitives: PasswordHasher.Primitives {
        PasswordHasher.Primitives(
            hash: { [self] password, operations, memory in
                failing.load(ordering: .relaxed)
                    ? nil : PasswordHasher.Primitives.libsodium.hash(password, operations, memory)
            },
            verify: { [self] password, hash in
                failing.load(ordering: .relaxed)
                    ? .outOfMemory : PasswordHasher.Primitives.libsodium.verify(password, hash)
            })
    }
}

@Suite("Hostile clients: password hashing under pressure")
struct HashingPressureTests {
    func login(_ client: TestHTTPClient, _ userName: String) async throws -> TestResponse {
        try await client.send(
            "POST", "/ff/login", json: #"{"userName":"\#(userName)","password":"correct horse"}"#)
    }

    @Test("logins beyond the hashing queue get 503 server_busy with Retry-After at once, off the loops")
    func boundedHashingQueue() async throws {
        let workers = BackgroundWorkers(threads: 1, name: "test-hashing", queueLimit: 1)
        let gated = GatedVerification(workers: workers)
        let server = try await TestServer { configuration in
            configuration.passwordHasher = PasswordHasher(
                operations: 1, memory: 64 * 1024, workers: workers, primitives: gated.primitives)
        }
        let client = server.client
        #expect(try await client.register("storm").status == 201)

        // One hash on the only thread, one waiting in the queue of one: the bound is reached.
        let running = Task { try await login(client, "storm") }
        #expect(await eventually { gated.entered.load(ordering: .relaxed) == 1 })
        let queued = Task { try await login(client, "storm") }
        #expect(await eventually { workers.waiting == 1 })
        for _ in 0..<3 {
            let refused = try await login(client, "storm")
            #expect(refused.status == 503)
            #expect(refused.header("Retry-After") == "2")
            #expect(
                refused.text
                    == #"{"status":503,"code":"server_busy","message":"The server is busy checking other passwords; try again in a few seconds.","details":{"retryAfter":2}}"#
            )
        }
        gated.gate.signal()
        gated.gate.signal()
        #expect(try await running.value.status == 200)
        #expect(try await queued.value.status == 200)
        #expect(workers.waiting == 0)
        // Hashes ran on the hashing workers, never on an event loop.
        #expect(gated.onWorkers.withLock { $0 } == [true, true])
        await server.stop()
    }

    @Test("Argon2id failing to allocate its memory answers 503 server_busy, and the server goes on")
    func hashingOutOfMemory() async throws {
        let allocation = FailingAllocation()
        let server = try await TestServer { configuration in
            configuration.passwordHasher = PasswordHasher(
                operations: 1, memory: 64 * 1024,
                workers: BackgroundWorkers(threads: 1, name: "test-oom", queueLimit: 4),
                primitives: allocation.primitives)
        }
        let client = server.client
        #expect(try await client.register("victim").status == 201)
        allocation.failing.store(true, ordering: .relaxed)
        let expected =
            #"{"status":503,"code":"server_busy","message":"The server is short of memory for checking passwords; try again in a few seconds.","details":{"retryAfter":5}}"#
        let refused = try await login(client, "victim")
        #expect(refused.status == 503)
        #expect(refused.header("Retry-After") == "5")
        #expect(refused.text == expected)
        let registration = try await client.register("newcomer")
        #expect(registration.status == 503)
        #expect(registration.text == expected)
        #expect(try await client.send("GET", "/health").status == 200)

        allocation.failing.store(false, ordering: .relaxed)
        #expect(try await login(client, "victim").status == 200)
        #expect(try await client.register("newcomer").status == 201)
        await server.stop()
    }

    @Test("libsodium's own allocation failure (a 2 TiB hash) is an error, not a precondition crash")
    func realAllocationFailure() async throws {
        let overcommit = try String(contentsOfFile: "/proc/sys/vm/overcommit_memory", encoding: .utf8)
        guard overcommit.hasPrefix("0") || overcommit.hasPrefix("2") else {
            print("skipped: vm.overcommit_memory is \(overcommit); a 2 TiB allocation might succeed")
            return
        }
        let huge = PasswordHasher(operations: 1, memory: 1 << 41, workers: nil)
        await #expect(throws: RoostError.self) { try await huge.hash("correct horse") }
        // A stored hash claiming 2 TiB (m is in KiB) fails the same way when checked.
        let cheap = try PasswordHasher.cheapForTests().hashBlocking("correct horse")
        let claimingHuge = cheap.replacingOccurrences(of: "m=64,", with: "m=\(1 << 31),")
        #expect(claimingHuge != cheap)
        #expect(PasswordHasher.Primitives.libsodium.verify("correct horse", claimingHuge) == .outOfMemory)
        #expect(PasswordHasher.Primitives.libsodium.verify("correct horse", cheap) == .match)
        #expect(PasswordHasher.Primitives.libsodium.verify("wrong horse", cheap) == .mismatch)
    }
}
