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
