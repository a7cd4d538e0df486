import Foundation
import RoostCore
import RoostStore
import RoostTestSupport
import Synchronization
import Testing

@testable import RoostSQLite

/// Issue 12, items 6–8: the data folder and the process under hostile conditions, on the real
/// binary where the finding is about the process (a second server, file modes, a full disk).
/// Item 9 (password hashing under pressure) is in HashingPressureTests.swift.
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
        #expect(
            try await runRoost(["index", "create", "A", "name", "--force", "--data-dir", directory]).status
                == 0)
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

        let digest = Sodium.hex(Array(sha256Digest(bytes)))
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

/// Item 6 on the real binary: a data folder on a small tmpfs the test mounts, then fills.
@Suite("Hostile clients: a full disk", .serialized)
struct FullDiskTests {
    static let refusal =
        #"{"status":507,"code":"insufficient_storage","message":"The server is out of disk space and cannot save changes right now; reading still works. Try again later.","details":{}}"#

    /// Writes to `path` until the file system says it is full, then gives `leaving` bytes back.
    func fill(_ path: String, leaving: Int = 0) {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0o600)
        defer { close(descriptor) }
        for size in [1 << 20, 4096, 1] {
            let chunk = [UInt8](repeating: 7, count: size)
            while write(descriptor, chunk, size) == size {}
        }
        if leaving > 0 { ftruncate(descriptor, lseek(descriptor, 0, SEEK_END) - off_t(leaving)) }
    }

    func create(_ client: TestHTTPClient, _ guid: String) async throws -> TestResponse {
        try await client.send(
            "POST", "/ff/resources/Disk",
            json: #"{"guid":"\#(guid)","payload":"\#(String(repeating: "x", count: 2000))"}"#)
    }

    func login(_ client: TestHTTPClient) async throws -> TestResponse {
        try await client.send("POST", "/ff/login", json: #"{"userName":"keeper","password":"correct horse"}"#)
    }

    func upload(_ client: TestHTTPClient, _ guid: String) async throws -> TestResponse {
        try await client.send(
            "PUT", "/ff/resources/Disk/\(guid)/photo", headers: [("Content-Type", "image/png")],
            body: [UInt8](repeating: 9, count: 256 << 10))
    }

    @Test(
        "a full disk answers 507 to writes, logins and uploads, serves reads, recovers alone, loses nothing")
    func fullDisk() async throws {
        guard let directory = try await mountSmallDisk(megabytes: 8) else { return }
        defer { _ = umount2(directory, Int32(MNT_DETACH)) }
        let arguments = ["--app", try writeOpenDefinition(beside: directory)]
        let server = try RoostProcess(dataDirectory: directory, arguments: arguments)
        let client = TestHTTPClient(port: server.port)
        #expect(
            try await client.send(
                "POST", "/ff/register", json: #"{"userName":"keeper","password":"correct horse"}"#
            ).status == 201)
        let token = try #require(try await login(client).json["token"] as? String)
        var acknowledged: [String] = []
        #expect(try await create(client, "before").status == 201)
        acknowledged.append("before")

        fill(directory + "/filler")
        var refused: TestResponse?
        for index in 0..<1000 {
            let response = try await create(client, "full-\(index)")
            guard response.status == 201 else {
                refused = response
                break
            }
            acknowledged.append("full-\(index)")
        }
        let refusal = try #require(refused)
        #expect(refusal.status == 507)
        #expect(refusal.text == Self.refusal)
        #expect(refusal.header("Retry-After") == "30")

        // Reads go on: objects, lists, the session of a logged-in user, health.
        #expect(try await client.send("GET", "/ff/resources/Disk/before").status == 200)
        #expect(try await client.send("GET", "/ff/resources/Disk?count=5").status == 200)
        #expect(try await client.send("GET", "/health").status == 200)
        let session = try await client.send(
            "GET", "/ff/session", headers: [("Authorization", "Bearer \(token)")])
        #expect(session.json["loggedIn"] as? Bool == true)
        // A login has to store its token, and an upload its bytes: both say the disk is full.
        let refusedLogin = try await login(client)
        #expect(refusedLogin.status == 507)
        #expect(refusedLogin.text == Self.refusal)
        let refusedUpload = try await upload(client, "before")
        #expect(refusedUpload.status == 507)
        #expect(refusedUpload.text == Self.refusal)
        #expect(refusedUpload.header("Retry-After") == "30")

        // Space returns: the same process writes again, with no restart.
        unlink(directory + "/filler")
        #expect(try await create(client, "after").status == 201)
        acknowledged.append("after")
        #expect(try await login(client).status == 200)
        #expect(try await upload(client, "after").status == 200)
        #expect(try await server.stop(signal: SIGTERM) == 0)
        let log = try String(contentsOfFile: directory + ".log", encoding: .utf8)
        #expect(log.components(separatedBy: "the disk under the data folder is full").count == 2, "\(log)")
        #expect(!log.contains(directory + "/"), "no paths in the log: \(log)")

        // Everything acknowledged is there after a restart, and the database is intact.
        let restarted = try RoostProcess(dataDirectory: directory, arguments: arguments)
        let reader = TestHTTPClient(port: restarted.port)
        var missing: [String] = []
        for guid in acknowledged
        where try await reader.send("GET", "/ff/resources/Disk/\(guid)").status != 200 {
            missing.append(guid)
        }
        #expect(missing.isEmpty, "acknowledged but lost: \(missing)")
        #expect(try await reader.send("GET", "/ff/resources/Disk/after/photo").body.count == 256 << 10)
        #expect(try await restarted.stop(signal: SIGTERM) == 0)
        let connection = try SQLiteConnection(path: directory + "/roost.sqlite")
        #expect(try connection.first("PRAGMA integrity_check") { $0.text(0) } == "ok")
        // The WAL written around the full disk checkpoints completely.
        #expect(try connection.first("PRAGMA wal_checkpoint(TRUNCATE)") { $0.integer(0) } == 0)
    }

    /// Mounts a tmpfs of `megabytes` on a new folder; nil (after printing why) where that is not allowed.
    func mountSmallDisk(megabytes: Int) async throws -> String? {
        let directory = TestServer.makeTemporaryDirectory()
        let mount = try await runProgram(
            "/bin/mount", ["-t", "tmpfs", "-o", "size=\(megabytes)m,mode=0700", "tmpfs", directory])
        guard mount.status == 0 else {
            print("skipped: cannot mount a tmpfs on \(directory): \(mount.errorOutput)")
            return nil
        }
        return directory
    }

    @Test("a write that fills the disk mid-batch: every write's answer agrees with what was stored")
    func fullDiskMidBatch() async throws {
        guard let directory = try await mountSmallDisk(megabytes: 4) else { return }
        defer { _ = umount2(directory, Int32(MNT_DETACH)) }
        let database = try SQLiteDatabase(
            path: directory + "/batch.sqlite",
            migrations: [Migration(version: 1, name: "t", sql: "CREATE TABLE t (name TEXT, payload BLOB)")])
        // Room for a few pages: the big write's spill takes them and fails, and the small write
        // could then reuse them.
        fill(directory + "/filler", leaving: 64 << 10)
        // The writer waits at a gate, so the big write and the small one queue up and commit as one
        // batch, big first: the big one spills the page cache, hits SQLITE_FULL mid-statement, and
        // SQLite rolls the whole transaction back under the batch.
        let gate = DispatchSemaphore(value: 0)
        let writerWaits = Atomic<Bool>(false)
        let blocker = Task {
            try await database.write { _ in
                writerWaits.store(true, ordering: .relaxed)
                gate.wait()
            }
        }
        #expect(await eventually { writerWaits.load(ordering: .relaxed) })
        let big = Task {
            try await database.write { try $0.run("INSERT INTO t VALUES ('big', randomblob(3145728))") }
        }
        // The writer waits, so each write is queued in the order it was made: big first.
        #expect(await eventually { database.queuedWriteCount == 1 })
        let small = Task { try await database.write { try $0.run("INSERT INTO t VALUES ('small', x'00')") } }
        #expect(await eventually { database.queuedWriteCount == 2 })
        gate.signal()
        try await blocker.value
        let bigResult = await big.result
        let smallResult = await small.result
        let bigStored = (try? bigResult.get()) != nil
        let smallStored = (try? smallResult.get()) != nil
        // Failures in the batch say the disk is full (507), not "no transaction is active" (500).
        for case .failure(let error) in [bigResult.map { _ in () }, smallResult.map { _ in () }] {
            #expect(StorageFailure.isOutOfSpace(error), "\(error)")
        }
        unlink(directory + "/filler")
        let names = try database.read { try $0.query("SELECT name FROM t") { $0.text(0) ?? "" } }
        #expect(!bigStored)
        #expect(names.contains("big") == bigStored)
        #expect(names.contains("small") == smallStored, "told \(smallStored), stored \(names)")
        // The writer is not wedged: the next write commits.
        _ = try await database.write { try $0.run("INSERT INTO t VALUES ('later', x'00')") }
        #expect(
            try database.read { try $0.query("SELECT name FROM t") { $0.text(0) ?? "" } }.contains("later"))
    }

    @Test("on a full disk a token due for renewal keeps working: renewal waits for space")
    func renewalOnFullDisk() async throws {
        guard let directory = try await mountSmallDisk(megabytes: 8) else { return }
        defer { _ = umount2(directory, Int32(MNT_DETACH)) }
        let clock = ManualWallClock()
        let server = try await TestServer(dataDirectory: directory) { configuration in
            configuration.clock = clock
            configuration.passwordHasher = PasswordHasher.cheapForTests()
        }
        let client = server.client
        #expect(try await client.register("renewer").status == 201)
        let token = try await client.login("renewer")
        clock.advance(seconds: 2 * 3600)
        fill(directory + "/filler")
        let session = try await client.send(
            "GET", "/ff/session", headers: [("Authorization", "Bearer \(token)")])
        #expect(session.status == 200)
        #expect(session.json["loggedIn"] as? Bool == true)
        unlink(directory + "/filler")
        await server.stop()
    }
}

/// SHA-256 of bytes, through the store's streaming digest.
func sha256Digest(_ bytes: [UInt8]) -> [UInt8] {
    let digest = StreamingDigest()
    digest.update(bytes[...])
    return digest.finish()
}
