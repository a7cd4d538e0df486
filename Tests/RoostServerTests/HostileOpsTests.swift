import Foundation
import RoostCore
import RoostStore
import RoostTestSupport
import Synchronization
import Testing

/// Issue 12, items 6–9: the data folder and the process under hostile conditions, on the real
/// binary where the finding is about the process (a full disk, a second server, file modes).
@Suite("Hostile clients: storage and process", .serialized)
struct HostileOpsTests {
    /// The permission bits of a file.
    func mode(_ path: String) -> Int {
        var status = stat()
        guard stat(path, &status) == 0 else { return -1 }
        return Int(status.st_mode & 0o777)
    }

    /// `roost serve` on `directory` under `timeout`, so a binary that wrongly starts cannot hang the test.
    func serveAgain(_ directory: String) async throws -> CommandResult {
        try await runProgram(
            "/usr/bin/timeout",
            [
                "20", try RoostProcess.binaryPath(), "serve", "--port", "0", "--data-dir", directory,
                "--access-log", "off",
            ])
    }

    @Test("a second server on the same data folder refuses to start, names the first, keeps its pid file")
    func oneServerPerDataFolder() async throws {
        let directory = TestServer.makeTemporaryDirectory()
        let arguments = ["--app", try writeOpenDefinition(beside: directory)]
        let first = try RoostProcess(dataDirectory: directory, arguments: arguments)
        let pidFile = try String(contentsOfFile: directory + "/roost.pid", encoding: .utf8)

        let second = try await serveAgain(directory)
        #expect(second.status == 75)
        #expect(
            second.errorOutput
                == "roost: cannot start: another Roost process (pid \(first.process.pid), roost serve) is using "
                + "the data folder \(directory); stop it first, or give this one another --data-dir\n")
        #expect(try String(contentsOfFile: directory + "/roost.pid", encoding: .utf8) == pidFile)
        #expect(try await TestHTTPClient(port: first.port).send("GET", "/health").status == 200)

        // Admin commands: short writes and reads work beside the server; an index build and a
        // gc that could take an upload in flight need the folder to themselves.
        let list = try await runRoost(["index", "list", "--data-dir", directory])
        #expect(list.status == 0)
        let index = try await runRoost(["index", "create", "A", "name", "--data-dir", directory])
        #expect(index.status == 75)
        #expect(index.errorOutput.contains("pid \(first.process.pid), roost serve"))
        #expect(index.errorOutput.contains("'roost app apply'"))
        let youngGC = try await runRoost(["blobs", "gc", "--data-dir", directory, "--min-age", "0"])
        #expect(youngGC.status == 75)
        #expect(try await runRoost(["blobs", "gc", "--data-dir", directory]).status == 0)
        let user = try await runRoost(
            ["users", "create", "ops", "--password-stdin", "--data-dir", directory], input: "correct horse\n")
        #expect(user.status == 0)

        #expect(try await first.stop(signal: SIGTERM) == 0)
        #expect(!FileManager.default.fileExists(atPath: directory + "/roost.pid"))
        // The lock dies with its process: the folder is free again, for a server or an index build.
        #expect(try await runRoost(["index", "create", "A", "name", "--data-dir", directory]).status == 0)
        let next = try RoostProcess(dataDirectory: directory, arguments: arguments)
        #expect(try await next.stop(signal: SIGTERM) == 0)
    }

    @Test("everything the server creates is owner-only, in a folder that was 0755, with one warning")
    func ownerOnlyFiles() async throws {
        let directory = TestServer.makeTemporaryDirectory()
        chmod(directory, 0o755)
        let arguments = ["--app", try writeOpenDefinition(beside: directory)]
        let server = try RoostProcess(dataDirectory: directory, arguments: arguments)
        let client = TestHTTPClient(port: server.port)
        let created = try await client.send("POST", "/ff/resources/A", json: #"{"name":"a"}"#)
        let guid = try #require(created.json["guid"] as? String)
        let bytes = Array("owner only".utf8)
        let upload = try await client.send(
            "PUT", "/ff/resources/A/\(guid)/file", headers: [("Content-Type", "text/plain")], body: bytes)
        #expect(upload.status == 200)

        let digest = Sodium.hex(Array(SHA256Digest(bytes)))
        let blob = "\(directory)/blobs/\(digest.prefix(2))/\(digest.dropFirst(2).prefix(2))"
        let files = ["roost.sqlite", "roost.sqlite-wal", "roost.sqlite-shm", "roost.lock", "roost.pid"].map {
            directory + "/" + $0
        }
        for file in files + [blob + "/" + digest] {
            #expect(mode(file) == 0o600, "\(file) is \(String(mode(file), radix: 8))")
        }
        let folders = ["/blobs", "/blobs/tmp", "/blobs/\(digest.prefix(2))"].map { directory + $0 } + [blob]
        for folder in folders {
            #expect(mode(folder) == 0o700, "\(folder) is \(String(mode(folder), radix: 8))")
        }
        let log = try String(contentsOfFile: directory + ".log", encoding: .utf8)
        #expect(
            log.components(separatedBy: "chmod 700 \(directory)").count == 2,
            "expected one warning naming the chmod to run: \(log)")
        #expect(try await server.stop(signal: SIGTERM) == 0)

        // A database an older version left 0644 is tightened at the next start.
        chmod(directory + "/roost.sqlite", 0o644)
        let restarted = try RoostProcess(dataDirectory: directory, arguments: arguments)
        #expect(mode(directory + "/roost.sqlite") == 0o600)
        try await restarted.stop(signal: SIGTERM)
    }
}

/// SHA-256 of bytes, through the store's streaming digest.
func SHA256Digest(_ bytes: [UInt8]) -> [UInt8] {
    let digest = StreamingDigest()
    digest.update(bytes[...])
    return digest.finish()
}

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
