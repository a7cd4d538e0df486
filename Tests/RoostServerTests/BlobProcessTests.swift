import Foundation
import RoostTestSupport
import Testing

/// Blobs on the real binary: a crash mid-upload, and memory during 200 MiB transfers.
@Suite("Blobs in the real binary", .serialized) struct BlobProcessTests {
    func kilobytes(_ field: String, of pid: Int32) throws -> Int {
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix(field + ":") }),
            let value = Int(
                line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "")
        else { throw TestClientError(description: "no \(field) in /proc/\(pid)/status") }
        return value
    }

    /// Sets VmHWM back to the current RSS (Linux's clear_refs, value 5).
    func resetPeak(of pid: Int32) throws {
        try Data("5".utf8).write(to: URL(fileURLWithPath: "/proc/\(pid)/clear_refs"))
    }

    func temporaryFiles(_ directory: String) -> [String] {
        (try? FileManager.default.contentsOfDirectory(atPath: directory + "/blobs/tmp")) ?? []
    }

    /// Starts an upload of 10 MiB, sends 1 MiB of it, and kills the server once that is on disk.
    func killMidUpload(_ server: RoostProcess, directory: String, path: String) async throws {
        let connection = try RawConnection(port: server.port)
        connection.send("PUT \(path) HTTP/1.1\r\nHost: x\r\nContent-Length: 10485760\r\n\r\n")
        connection.send([UInt8](repeating: 1, count: 1 << 20))
        let partial = await eventually {
            guard let name = temporaryFiles(directory).first else { return false }
            let size = (try? FileManager.default.attributesOfItem(atPath: directory + "/blobs/tmp/" + name))?[
                .size]
            return (size as? Int ?? 0) >= 1 << 20
        }
        #expect(partial)
        try await server.stop(signal: SIGKILL)
    }

    @Test("a crash during an upload leaves no partial blob; gc, or the next start, removes the leftover")
    func crashDuringUpload() async throws {
        let directory = TestServer.makeTemporaryDirectory()
        let arguments = ["--app", try writeOpenDefinition(beside: directory)]
        let server = try RoostProcess(dataDirectory: directory, arguments: arguments)
        let created = try await TestHTTPClient(port: server.port).send("POST", "/ff/resources/A", json: "{}")
        let guid = try #require(created.json["guid"] as? String)
        let path = "/ff/resources/A/\(guid)/big"
        try await killMidUpload(server, directory: directory, path: path)
        #expect(temporaryFiles(directory).count == 1)
        let gc = try await runRoost(["blobs", "gc", "--data-dir", directory, "--min-age", "0"])
        #expect(gc.output == "freed 0 blobs (0 bytes) and 1 abandoned upload; 0 blobs kept\n")
        #expect(temporaryFiles(directory).isEmpty)

        let restarted = try RoostProcess(dataDirectory: directory, arguments: arguments)
        let client = TestHTTPClient(port: restarted.port)
        #expect(try await client.send("GET", path).status == 404)
        #expect(try await client.send("GET", "/ff/resources/A/\(guid)").json["version"] as? Int == 1)
        try await killMidUpload(restarted, directory: directory, path: path)
        // The server sweeps leftovers of dead processes when it starts.
        let again = try RoostProcess(dataDirectory: directory, arguments: arguments)
        #expect(await eventually { temporaryFiles(directory).isEmpty })
        #expect(try await TestHTTPClient(port: again.port).send("GET", path).status == 404)
        try await again.stop(signal: SIGTERM)
    }

    @Test("a 200 MiB upload and download raise the server's resident memory by under 16 MiB")
    func memoryStaysFlat() async throws {
        let directory = TestServer.makeTemporaryDirectory()
        let server = try RoostProcess(
            dataDirectory: directory,
            arguments: ["--app", try writeOpenDefinition(beside: directory), "--max-blob-size", "300MiB"])
        let client = TestHTTPClient(port: server.port)
        let created = try await client.send("POST", "/ff/resources/A", json: "{}")
        let guid = try #require(created.json["guid"] as? String)
        let pid = server.process.pid
        // A small transfer first, so one-time set-up (threads, arenas) is not counted.
        _ = try await client.send(
            "PUT", "/ff/resources/A/\(guid)/small", body: [UInt8](repeating: 2, count: 1 << 20))
        _ = try await client.send("GET", "/ff/resources/A/\(guid)/small")
        // Reset the peak (startup's Argon2id decoy hash alone peaks at 19 MiB), then measure from here.
        try resetPeak(of: pid)
        let before = try kilobytes("VmRSS", of: pid)
        let total = 200 << 20
        let port = server.port
        let uploaded = try await offCooperativePool { () throws -> Int in
            let connection = try RawConnection(port: port, timeout: 120)
            connection.send(
                "PUT /ff/resources/A/\(guid)/big HTTP/1.1\r\nHost: x\r\nContent-Length: \(total)\r\n\r\n")
            var chunk = [UInt8](repeating: 0, count: 1 << 20)
            for index in 0..<200 {
                chunk[0] = UInt8(truncatingIfNeeded: index)
                guard connection.send(chunk) else { break }
            }
            return try connection.readResponse().status
        }
        #expect(uploaded == 200)
        let afterUpload = try kilobytes("VmHWM", of: pid)
        try resetPeak(of: pid)
        #expect(afterUpload - before < 16 * 1024, "upload: peak \(afterUpload) KiB, before \(before) KiB")

        let downloaded = try await offCooperativePool { () throws -> (Int, Int) in
            let connection = try RawConnection(port: port, timeout: 120)
            connection.send("GET /ff/resources/A/\(guid)/big HTTP/1.1\r\nHost: x\r\n\r\n")
            let response = try connection.drainResponse()
            return (response.status, response.bodyBytes)
        }
        #expect(downloaded == (200, total))
        let afterDownload = try kilobytes("VmHWM", of: pid)
        #expect(
            afterDownload - before < 16 * 1024, "download: peak \(afterDownload) KiB, before \(before) KiB")
        try await server.stop(signal: SIGTERM)
        try? FileManager.default.removeItem(atPath: directory)
    }
}
