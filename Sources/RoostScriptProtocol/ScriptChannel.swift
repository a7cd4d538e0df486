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
/// names the message (see `/work/briefs/scripts-contract.md` and the README's script section).
/// Reads and writes block; neither side ever reads or writes a channel from an event loop.
public struct ScriptChannel: Sendable {
    /// The largest frame either side accepts: more is a broken or hostile peer.
    public static let maximumFrameBytes = 16 << 20

    public let descriptor: Int32

    public init(descriptor: Int32) { self.descriptor = descriptor }

    /// Writes one message; a peer that has gone throws `.closed`.
    public func send(_ message: JSONObject) throws(ScriptChannelError) {
        let body = JSONWriter.bytes(.object(message))
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
        let header = try readExactly(4, deadline: deadline)
        let length = Int(header[0]) << 24 | Int(header[1]) << 16 | Int(header[2]) << 8 | Int(header[3])
        guard length <= Self.maximumFrameBytes else {
            throw ScriptChannelError(.malformed, "a frame of \(length) bytes is over the 16 MiB limit")
        }
        let body = try readExactly(length, deadline: deadline)
        guard case .object(let message)? = try? JSONParser.parse(body), message["t"]?.stringValue != nil
        else {
            throw ScriptChannelError(.malformed, "a frame that is not a JSON object with a 't' member")
        }
        return message
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
        var bytes = [UInt8](repeating: 0, count: count)
        var offset = 0
        while offset < count {
            if let deadline { try wait(until: deadline) }
            let got = bytes.withUnsafeMutableBytes { buffer in
                read(descriptor, buffer.baseAddress! + offset, count - offset)
            }
            if got < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                throw ScriptChannelError(.system, "reading the script channel failed (errno \(errno))")
            }
            if got == 0 {
                throw ScriptChannelError(.closed, "the script channel was closed by the other side")
            }
            offset += got
        }
        return bytes
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
