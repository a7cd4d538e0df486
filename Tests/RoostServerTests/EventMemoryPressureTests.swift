import Foundation
import Glibc
import RoostCore
import RoostServer
import RoostTestSupport
import Testing

/// An event's bytes are held once for all the streams it goes to, and all streams together hold
/// a bounded number of bytes: streams that never read cannot multiply one large create. (A
/// pressure suite: 8 MiB creates to dozens of streams run after the parallel pass, alone.)
@Suite("Realtime events: memory held for streams that do not read")
struct EventMemoryPressureTests {
    /// 32 streams that never read and one 8 MiB create: before, each stream's output buffer held
    /// its own copy of the event (+256 MB); now they share one.
    @Test func oneEventIsHeldOnceForEveryStream() async throws {
        let directory = TestServer.makeTemporaryDirectory()
        let server = try RoostProcess(
            dataDirectory: directory,
            arguments: [
                "--app", try writeOpenDefinition(beside: directory), "--events-max-streams-per-user", "100",
                // Under the suite's load the reader may take long over 8 MiB: it must not be cut.
                "--events-slow-reader-timeout", "300s",
            ])
        defer { server.process.signal(SIGKILL) }
        let client = TestHTTPClient(port: server.port)
        let large = #"{"text":""# + String(repeating: "x", count: 8 << 20) + #""}"#
        // A first large create: what parsing and storing it costs is not the streams' doing.
        #expect(try await client.send("POST", "/ff/resources/Post", json: large).status == 201)
        let unread = try (0..<32).map { _ in
            try UnreadStream(port: server.port, path: "/ff/events?collection=Post")
        }
        let reader = try await EventStreamReader(port: server.port, path: "/ff/events?collection=Post")
        #expect(try await reader.waitForComment(containing: "subscribed"))
        let before = try Self.peakResidentBytes(of: server.process.pid)
        #expect(try await client.send("POST", "/ff/resources/Post", json: large).status == 201)
        #expect(try await client.send("POST", "/ff/resources/Post", json: #"{"text":"small"}"#).status == 201)
        // The reader had both events: the fan-out has been through the large one for everyone.
        let events = try await reader.next(2)
        #expect(
            events.map(\.type) == ["create", "create"],
            "\(events.map { $0.data.prefix(40) }) \(reader.comments)")
        let grown = try Self.peakResidentBytes(of: server.process.pid) - before
        #expect(grown < 64 << 20, "peak RSS grew by \(grown >> 20) MiB")
        _ = unread
    }

    /// Past `heldBytes`, streams that stay behind are cut (their unsent bytes dropped) and the
    /// held bytes go back to nothing; a stream that reads gets the event whole.
    @Test func theBytesAllStreamsHoldAreBounded() async throws {
        let server = try await makeEventServer { limits in
            limits.streamsPerUser = 100
            limits.heldBytes = 2 << 20
        }
        defer { Task { await server.stop() } }
        let unread = try (0..<8).map { _ in
            try UnreadStream(port: server.port, path: "/ff/events?collection=Post")
        }
        let reader = try await subscribe(server, "collection=Post")
        #expect(await eventually { server.application.changeFeed.streamCount == 9 })
        let large = #"{"text":""# + String(repeating: "y", count: 4 << 20) + #""}"#
        #expect(try await server.client.send("POST", "/ff/resources/Post", json: large).status == 201)
        let event = try #require(try await reader.next())
        #expect(event.type == "create" && event.data.utf8.count > 4 << 20)
        #expect(await eventually(within: 60) { server.application.changeFeed.streamCount == 1 })
        #expect(await eventually(within: 60) { server.application.changeFeed.heldEventBytes < 4096 })
        // Each cut stream ends without the event whole: its client resumes from before it.
        for stream in unread {
            let received = try await offCooperativePool { stream.readToEnd() }
            #expect(received < 4 << 20)
        }
    }

    /// Streams whose subscriptions differ (a distinct query each) are distinct viewers, yet see the
    /// same document: they share one copy of its event.
    @Test func viewersWithTheSameEventShareItsBytes() async throws {
        let server = try await makeEventServer { limits in
            limits.streamsPerUser = 100
            limits.subscriptionsPerStream = 4
        }
        defer { Task { await server.stop() } }
        let unread = try (0..<16).map { index in
            try UnreadStream(
                port: server.port,
                path: "/ff/events?collection=Post&query=" + encoded("(text ne 'n\(index)')"))
        }
        let reader = try await subscribe(server, "collection=Post")
        let large = #"{"text":""# + String(repeating: "w", count: 4 << 20) + #""}"#
        #expect(try await server.client.send("POST", "/ff/resources/Post", json: large).status == 201)
        #expect(try await reader.next()?.type == "create")
        // The unread streams hold the event still: once, not sixteen times (64 MiB).
        let held = server.application.changeFeed.heldEventBytes
        #expect(held > 4 << 20 && held < 5 << 20, "\(held >> 20) MiB held")
        _ = unread
    }

    /// A new copy of an event that would put the streams over `heldBytes` is not made: its streams
    /// get the farewell and resume from before it, once the streams that do not read are cut.
    @Test func aCopyOverTheBudgetIsRefusedAndItsStreamsResume() async throws {
        let server = try await makeEventServer { limits in
            limits.streamsPerUser = 100
            limits.heldBytes = 8 << 20
            // No heartbeat comes between the events and the end the test waits for, and the
            // streams that do not read stay until the test closes them.
            limits.heartbeat = .seconds(600)
            limits.stalledStreamGrace = .seconds(600)
        }
        defer { Task { await server.stop() } }
        let unread = try (0..<4).map { _ in
            try UnreadStream(port: server.port, path: "/ff/events?collection=Post")
        }
        let reader = try await subscribe(server, "collection=Post")
        for letter in ["a", "b"] {
            // Larger than the kernel takes for a socket (4 MiB), so the unread streams hold part of it.
            let body = #"{"text":""# + String(repeating: letter, count: 6 << 20) + #""}"#
            #expect(try await server.client.send("POST", "/ff/resources/Post", json: body).status == 201)
        }
        let first = try #require(try await reader.next())
        #expect(first.data.contains("aaaa"))
        // The second did not fit beside the first, which the unread streams hold.
        #expect(try await reader.next() == nil)
        let resumeFrom = try #require(first.id)
        #expect(
            reader.comments.contains { $0.contains("Last-Event-ID: \(resumeFrom)") }, "\(reader.comments)")
        #expect(server.application.changeFeed.heldEventBytes <= 8 << 20)
        // Once the streams that do not read are gone, the reader resumes and has the second whole.
        for stream in unread { stream.hangUp() }
        #expect(await eventually(within: 60) { server.application.changeFeed.streamCount == 0 })
        let resumed = try await subscribe(server, "collection=Post", headers: [("Last-Event-ID", resumeFrom)])
        let second = try #require(try await resumed.next())
        #expect(second.data.contains("bbbb"))
        _ = unread
    }

    static func peakResidentBytes(of pid: Int32) throws -> Int {
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        let line = try #require(status.split(separator: "\n").first { $0.hasPrefix("VmHWM:") })
        let kilobytes = try #require(Int(line.split(separator: " ", omittingEmptySubsequences: true)[1]))
        return kilobytes * 1024
    }
}

/// An event stream whose client reads its head and then nothing, with a small receive buffer so
/// that the kernel takes little of what the server sends.
final class UnreadStream: Sendable {
    let fd: Int32

    init(port: Int, path: String) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var size: Int32 = 4096
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        var timeout = timeval(tv_sec: 30, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
        guard connected else { throw TestClientError(description: "cannot connect to port \(port)") }
        let request = Array("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8)
        _ = request.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        // Until the stream says it is subscribed: every later commit is sent to it.
        var seen: [UInt8] = []
        var byte: UInt8 = 0
        while !String(decoding: seen, as: UTF8.self).contains(": subscribed") {
            guard recv(fd, &byte, 1, 0) == 1 else {
                throw TestClientError(description: "the stream ended before it was subscribed")
            }
            seen.append(byte)
        }
    }

    /// Closes both directions: the server sees the client go.
    func hangUp() { shutdown(fd, Int32(SHUT_RDWR)) }

    /// Reads until the server closes; the number of bytes read.
    func readToEnd() -> Int {
        var total = 0
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count <= 0 { return total }
            total += count
        }
    }

    deinit { close(fd) }
}
