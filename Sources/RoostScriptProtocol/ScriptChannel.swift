import RoostJSON

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Why a script channel stopped: the other side closed it, sent something that is not a frame,
/// or did not answer in time.
public struct ScriptChannelError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Kind: Sendable, Equatable {
        case closed
        case malformed
        case timedOut
        case system
    }
    public let kind: Kind
    public let message: String

    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    public var description: String { message }
}

/// One end of the socket between the server and a script worker process. Every message is a
/// frame: a 4-byte big-endian length, then that many bytes of one JSON object whose `"t"` member
/// names the message (see `/work/briefs/scripts-contract.md` and docs/scripts.md).
/// Reads and writes block; neither side ever reads or writes a channel from an event loop, and
/// one thread at a time reads a channel (its copies share what was read ahead).
public struct ScriptChannel: Sendable {
    /// The largest frame either side accepts: more is a broken or hostile peer.
    public static let maximumFrameBytes = 16 << 20
    /// The deepest nesting a frame may have: a document as deep as the server accepts
    /// (``JSONParser/defaultMaximumDepth``) plus room for the levels a frame wraps it in (an
    /// extension's request data, a call's result array), so a frame built from accepted data
    /// always fits. Each side checks what it builds from a script's data before sending it.
    public static let maximumDepth = JSONParser.defaultMaximumDepth + 64

    public let descriptor: Int32
    /// Bytes read past the last frame: a read takes what the socket has, often a whole frame
    /// and its header at once.
    private let readAhead = ReadAhead()

    public init(descriptor: Int32) { self.descriptor = descriptor }

    /// Writes one message; a peer that has gone throws `.closed`.
    public func send(_ message: JSONObject) throws(ScriptChannelError) {
        try send(frame: JSONWriter.bytes(.object(message)))
    }

    /// Writes one message already in JSON (a JSON object whose `t` member names it).
    public func send(frame body: [UInt8]) throws(ScriptChannelError) {
        guard body.count <= Self.maximumFrameBytes else {
            throw ScriptChannelError(
                .malformed, "a message of \(body.count) bytes is over the 16 MiB frame limit")
        }
        let length = UInt32(body.count)
        var frame: [UInt8] = [
            UInt8(length >> 24), UInt8((length >> 16) & 0xFF), UInt8((length >> 8) & 0xFF),
            UInt8(length & 0xFF),
        ]
        frame.append(contentsOf: body)
        try writeAll(frame)
    }

    /// Reads one message, waiting at most until `deadline` (a `CLOCK_MONOTONIC` time in
    /// nanoseconds) when given.
    public func receive(deadline: UInt64? = nil) throws(ScriptChannelError) -> JSONObject {
        try receiveFrame(deadline: deadline).message
    }

    /// Reads one message, and its JSON text as it came (to hand on without writing it again).
    public func receiveFrame(deadline: UInt64? = nil) throws(ScriptChannelError) -> (
        message: JSONObject, body: [UInt8]
    ) {
        let header = try readExactly(4, deadline: deadline)
        let length = Int(header[0]) << 24 | Int(header[1]) << 16 | Int(header[2]) << 8 | Int(header[3])
        guard length <= Self.maximumFrameBytes else {
            throw ScriptChannelError(.malformed, "a frame of \(length) bytes is over the 16 MiB limit")
        }
        let body = try readExactly(length, deadline: deadline)
        guard case .object(let message)? = try? JSONParser.parse(body, maximumDepth: Self.maximumDepth),
            message["t"]?.stringValue != nil
        else {
            throw ScriptChannelError(.malformed, "a frame that is not a JSON object with a 't' member")
        }
        return (message, body)
    }

    /// Now, on the clock deadlines use.
    public static func monotonicNanoseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
    }

    private func writeAll(_ bytes: [UInt8]) throws(ScriptChannelError) {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { buffer in
                #if canImport(Glibc)
                    Glibc.send(
                        descriptor, buffer.baseAddress! + offset, buffer.count - offset, Int32(MSG_NOSIGNAL))
                #else
                    Darwin.write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                #endif
            }
            if written < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                throw ScriptChannelError(.closed, "the script channel is closed (errno \(errno))")
            }
            offset += written
        }
    }

    private func readExactly(_ count: Int, deadline: UInt64?) throws(ScriptChannelError) -> [UInt8] {
        while readAhead.available < count {
            // What is missing, or a chunk more when less is missing: the next frame often came too.
            let want = max(count - readAhead.available, ReadAhead.chunk)
            if let deadline { try wait(until: deadline) }
            let got = readAhead.fill(from: descriptor, upTo: want)
            if got < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                throw ScriptChannelError(.system, "reading the script channel failed (errno \(errno))")
            }
            if got == 0 {
                throw ScriptChannelError(.closed, "the script channel was closed by the other side")
            }
        }
        return readAhead.take(count)
    }

    private func wait(until deadline: UInt64) throws(ScriptChannelError) {
        while true {
            let now = Self.monotonicNanoseconds()
            guard now < deadline else { throw ScriptChannelError(.timedOut, "no answer before the deadline") }
            var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            let milliseconds = Int32(min((deadline - now) / 1_000_000 + 1, 60_000))
            let ready = poll(&poller, 1, milliseconds)
            if ready > 0 { return }
            if ready < 0 && errno != EINTR {
                throw ScriptChannelError(.system, "waiting on the script channel failed (errno \(errno))")
            }
        }
    }
}

/// What one channel has read and not yet handed out: `storage[start..<end]`.
private final class ReadAhead: @unchecked Sendable {
    static let chunk = 64 << 10
    private var storage = [UInt8](repeating: 0, count: ReadAhead.chunk)
    private var start = 0
    private var end = 0

    var available: Int { end - start }

    /// Reads at most `count` more bytes from `descriptor`: `read`'s answer.
    func fill(from descriptor: Int32, upTo count: Int) -> Int {
        if storage.count - end < count {
            if start > 0 {
                storage.withUnsafeMutableBytes { buffer in
                    let base = buffer.baseAddress!
                    _ = memmove(base, base + start, end - start)
                }
                (start, end) = (0, end - start)
            }
            if storage.count - end < count {
                storage.append(contentsOf: repeatElement(0, count: count - (storage.count - end)))
            }
        }
        let got = storage.withUnsafeMutableBytes { buffer in
            read(descriptor, buffer.baseAddress! + end, count)
        }
        if got > 0 { end += got }
        return got
    }

    func take(_ count: Int) -> [UInt8] {
        let taken = Array(storage[start..<start + count])
        start += count
        if start == end {
            (start, end) = (0, 0)
            // A 16 MiB frame's room is not kept for the small ones that follow.
            if storage.count > 4 * ReadAhead.chunk { storage = [UInt8](repeating: 0, count: ReadAhead.chunk) }
        }
        return taken
    }
}
