import Foundation
import RoostClient
import RoostTestSupport
import Testing

/// Files stream between disk and server: memory stays bounded whatever the size, and progress
/// is reported as bytes move.
@Suite(.serialized) struct FileTransferTests {
    static let size = 200 << 20

    /// The process's resident memory now, from /proc (Linux), in bytes.
    static func residentBytes() -> Int {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8),
            let pages = Int(text.split(separator: " ")[1])
        else { return 0 }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }

    /// Records the most memory seen at each progress call.
    final class Peak: @unchecked Sendable {
        // Safe: `value` and `last` are only touched with `lock` held.
        private let lock = NSLock()
        private var value = 0
        private var last: Int64 = 0
        var monotonic = true

        func sample(_ progress: TransferProgress) {
            let resident = FileTransferTests.residentBytes()
            lock.withLock {
                value = max(value, resident)
                if progress.bytes < last { monotonic = false }
                last = progress.bytes
            }
        }

        var peak: Int { lock.withLock { value } }
        var bytes: Int64 { lock.withLock { last } }
    }

    static func makeFile(_ path: String) throws {
        FileManager.default.createFile(atPath: path, contents: nil)
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        var chunk = Data(count: 1 << 20)
        for index in 0..<(size >> 20) {
            chunk[0] = UInt8(index & 0xff)
            try handle.write(contentsOf: chunk)
        }
        try handle.close()
    }

    @Test func twoHundredMebibytesUpAndDownWithProgress() async throws {
        let server = try await makeServer(maxBlobBytes: Self.size + (1 << 20))
        let client = try makeClient(port: server.port)
        let folder = TestServer.makeTemporaryDirectory()
        let source = folder + "/big.bin"
        try Self.makeFile(source)
        let note = try await client.create(Note(text: "big"))

        let before = Self.residentBytes()
        let sent = Peak()
        let outcome = try await client.upload(
            file: URL(fileURLWithPath: source), contentType: "application/octet-stream", to: "file", of: note,
            progress: { sent.sample($0) })
        let stored = try #require(outcome.stored)
        #expect(sent.bytes == Int64(Self.size))
        #expect(sent.monotonic)

        let received = Peak()
        let target = URL(fileURLWithPath: folder + "/copy.bin")
        _ = try await client.download(
            member: "file", of: stored, to: target, progress: { received.sample($0) })
        #expect(received.bytes == Int64(Self.size))
        let attributes = try FileManager.default.attributesOfItem(atPath: target.path)
        #expect(attributes[.size] as? Int == Self.size)
        #expect(FileManager.default.contentsEqual(atPath: source, andPath: target.path))

        // Client and server share this process with the rest of the suite, so its memory says
        // little here; the same transfer in a process of its own is measured below.
        let grown = max(sent.peak, received.peak) - before
        print("file transfer: resident memory of the test process grew by \(grown >> 20) MiB")
    }

    /// The client alone in its own process (TransferProbe), 200 MiB each way: streaming keeps its
    /// memory flat; holding the file would cost at least 200 MiB.
    @Test func theClientAloneStaysWithin64MiBFor200MiBEachWay() async throws {
        let server = try await makeServer(maxBlobBytes: Self.size + (1 << 20))
        let folder = TestServer.makeTemporaryDirectory()
        try Self.makeFile(folder + "/big.bin")
        let result = try await runProgram(
            try RoostProcess.productPath("TransferProbe"),
            [
                "--server", "http://127.0.0.1:\(server.port)", "--state", folder + "/state", "run",
                folder + "/big.bin", folder + "/copy.bin",
            ])
        #expect(result.status == 0, "\(result.errorOutput)")
        let grown = try #require(
            result.output.split(separator: " ").last.flatMap {
                Int($0.trimmingCharacters(in: .whitespacesAndNewlines))
            },
            "\(result.output)")
        print("file transfer: the client's resident memory grew by \(grown >> 20) MiB for 200 MiB each way")
        #expect(grown < 64 << 20)
        #expect(FileManager.default.contentsEqual(atPath: folder + "/big.bin", andPath: folder + "/copy.bin"))
    }

    @Test func aFileUploadQueuedOfflineIsSentFromTheQueuesCopy() async throws {
        let server = try await makeServer()
        let port = server.port
        let storage = TestServer.makeTemporaryDirectory()
        let client = try makeClient(port: port, storage: storage)
        let note = try await client.create(Note(text: "photo"))
        await server.stop()

        let file = storage + "/photo.png"
        let bytes = Data((0..<300_000).map { UInt8($0 & 0xff) })
        try bytes.write(to: URL(fileURLWithPath: file))
        let outcome = try await client.upload(
            file: URL(fileURLWithPath: file), contentType: "image/png", to: "image", of: note,
            policy: .queueWhenOffline)
        guard case .queued = outcome else {
            Issue.record("delivered while down")
            return
        }
        try FileManager.default.removeItem(atPath: file)  // the app's copy may go: the queue has its own

        let restarted = try await makeServer(port: port, dataDirectory: server.dataDirectory)
        _ = restarted
        #expect(await client.flush() == FlushResult(delivered: 1, failed: 0, state: .idle))
        let after = try await client.fetch(Note.self, guid: note.guid, cachePolicy: .networkOnly)
        #expect(try await client.download(member: "image", of: after) == bytes)
        #expect(
            (try? FileManager.default.contentsOfDirectory(atPath: storage + "/queue-bodies"))?.isEmpty ?? true
        )
    }

    /// A server that is not Roost: it answers any upload with 17 MiB of body.
    static let oversizedAnswerServer = """
        import http.server
        class Handler(http.server.BaseHTTPRequestHandler):
            def do_PUT(self):
                if self.headers.get('Content-Length'):
                    self.rfile.read(int(self.headers['Content-Length']))
                else:
                    while True:
                        size = int(self.rfile.readline().strip() or b'0', 16)
                        self.rfile.read(size + 2)
                        if size == 0:
                            break
                body = b'x' * (17 << 20)
                self.send_response(200)
                self.send_header('Content-Type', 'application/json')
                self.send_header('Content-Length', str(len(body)))
                self.send_header('Connection', 'close')
                self.end_headers()
                try:
                    self.wfile.write(body)
                except OSError:
                    pass
            def log_message(self, *arguments):
                pass
        server = http.server.HTTPServer(('127.0.0.1', 0), Handler)
        print(server.server_port, flush=True)
        server.handle_request()
        """

    @Test func anUploadAnswerOverSixteenMebibytesIsRefused() async throws {
        let output = try ChildProcess.makePipe()
        let child = try ChildProcess(
            "/usr/bin/python3", ["-c", Self.oversizedAnswerServer], output: output.write)
        close(output.write)
        defer { close(output.read) }
        var line = Data()
        var byte: UInt8 = 0
        while read(output.read, &byte, 1) == 1, byte != UInt8(ascii: "\n") { line.append(byte) }
        let port = try #require(Int(String(decoding: line, as: UTF8.self)))

        let client = try makeClient(port: port)
        let folder = TestServer.makeTemporaryDirectory()
        try Data("small".utf8).write(to: URL(fileURLWithPath: folder + "/small.bin"))
        let note = Stored(
            value: Note(text: "x"),
            metadata: ObjectMetadata.forTests(guid: "g1"))
        do {
            _ = try await client.upload(
                file: URL(fileURLWithPath: folder + "/small.bin"), to: "file", of: note)
            Issue.record("a 17 MiB answer was taken")
        } catch let error as RoostError {
            #expect(error.code == "invalid_response")
            #expect(error.status == nil)
            #expect(error.message.contains("larger than 16 MiB"))
        }
        child.signal(SIGKILL)
        _ = child.waitForExit()
    }
}

extension ObjectMetadata {
    /// Metadata of an object that exists only in a test.
    static func forTests(guid: String) -> ObjectMetadata {
        let json =
            #"{"guid":"\#(guid)","ffUrl":"/ff/resources/Note/\#(guid)","createdAt":1,"updatedAt":1,"version":1}"#
        return try! JSONDecoder().decode(ObjectMetadata.self, from: Data(json.utf8))
    }
}
