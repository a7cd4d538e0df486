import RoostThreads
import Synchronization

/// A response body produced over time, such as Server-Sent Events: a handler returns a
/// ``Response`` carrying one, the connection sends the head (without a length; the body ends
/// when the connection closes), and whoever holds the stream sends bytes from any thread. The
/// bytes are written on the connection's loop. A stream does not count against the read
/// timeout, ends when the client goes, when ``finish(_:)`` is called or when the server shuts
/// down, and never holds more than ``bufferLimit`` unsent bytes: a client that reads slower than
/// the stream is written is sent a farewell and disconnected.
public final class ResponseStream: Sendable {
    /// What a ``send(_:farewell:)`` did.
    public enum Outcome: Sendable, Equatable {
        /// The bytes are on their way.
        case queued
        /// They would have put the stream over its limit: the farewell was sent instead and the
        /// stream ends.
        case overLimit
        /// The stream had ended already.
        case ended
        /// Asked only when not backed up, it was: nothing was queued.
        case backedUp
    }

    /// Unsent bytes at most: those on their way to the loop plus those in the connection's output.
    public let bufferLimit: Int

    private struct State {
        var connection: Connection?
        /// Sent before the connection took the stream, in order.
        var pending: [Piece] = []
        /// Bytes queued for the loop but not yet in the connection's output.
        var inFlight = 0
        /// The connection's unsent output when last seen (after a write, or drained to nothing).
        var output = 0
        var ended = false
        /// A farewell or a finish is on its way: nothing more is taken.
        var closing = false
        /// ``cut()`` was asked for.
        var cut = false
        /// Bytes the client has taken from the connection's output so far.
        var taken = 0
        var onEnd: [@Sendable () -> Void] = []

        func isBackedUp(_ bufferLimit: Int) -> Bool { inFlight + output >= bufferLimit / 2 }
    }

    private let state = Mutex(State())

    /// A stream that holds at most `bufferLimit` unsent bytes.
    public init(bufferLimit: Int) {
        self.bufferLimit = bufferLimit
    }

    /// Queues `bytes`; when they would go over ``bufferLimit``, queues `farewell` instead (it may
    /// go over) and ends the stream once that is sent.
    /// With a `batch`, the bytes wait in it until it is flushed: a sender going through many
    /// streams hands each loop one job instead of one per stream. With `unlessBackedUp`, nothing
    /// is queued while ``isBackedUp`` (one lock for the question and the send).
    /// With `shared`, the bytes are held by reference until written (and `shared` with them), not
    /// copied: one event sent to a thousand streams is held once.
    @discardableResult
    public func send(
        _ bytes: [UInt8], shared: (any AnyObject & Sendable)? = nil, farewell: [UInt8],
        batch: StreamWriteBatch? = nil, unlessBackedUp: Bool = false
    ) -> Outcome {
        let (outcome, piece, connection) = state.withLock {
            state -> (Outcome, Piece?, Connection?) in
            guard !state.ended, !state.closing else { return (.ended, nil, nil) }
            if unlessBackedUp && state.isBackedUp(bufferLimit) { return (.backedUp, nil, nil) }
            let piece: Piece
            // One piece bigger than the limit still goes when nothing waits, or it could never go.
            let waiting = state.inFlight + state.output
            if waiting > 0 && waiting + bytes.count > bufferLimit {
                state.closing = true
                piece = Piece(bytes: farewell, farewell: [], last: true)
            } else {
                piece = Piece(bytes: bytes, farewell: farewell, last: false, shared: shared)
            }
            state.inFlight += piece.bytes.count
            if state.connection == nil { state.pending.append(piece) }
            return (piece.last ? .overLimit : .queued, piece, state.connection)
        }
        if let piece, let connection {
            if let batch {
                batch.add(piece, of: self, on: connection)
            } else {
                connection.loop.streamWrites.append(
                    [
                        StreamWrite(
                            connection: connection, stream: self, piece: piece, queued: StreamWrite.stamp())
                    ],
                    on: connection.loop)
            }
        }
        return outcome
    }

    /// Sends `bytes` (whatever the limit) and ends the stream; with a `batch`, after what waits
    /// in it.
    public func finish(_ bytes: [UInt8] = [], batch: StreamWriteBatch? = nil) {
        let connection = state.withLock { state -> Connection? in
            guard !state.ended, !state.closing else { return nil }
            state.closing = true
            state.inFlight += bytes.count
            if state.connection == nil { state.pending.append(Piece(bytes: bytes, farewell: [], last: true)) }
            return state.connection
        }
        guard let connection else { return }
        let piece = Piece(bytes: bytes, farewell: [], last: true)
        if let batch {
            batch.add(piece, of: self, on: connection)
        } else {
            connection.loop.streamWrites.append(
                [StreamWrite(connection: connection, stream: self, piece: piece)], on: connection.loop)
        }
    }

    /// Ends the stream now, dropping whatever waits unsent, and closes the connection: for a
    /// client so far behind that what it holds must be given back. Its client resumes from the
    /// last event it received whole.
    @discardableResult
    public func cut() -> Bool {
        let (first, connection) = state.withLock { state -> (Bool, Connection?) in
            guard !state.ended, !state.cut else { return (false, nil) }
            state.cut = true
            state.closing = true
            // Not yet taken by its connection: it then ends at once.
            state.pending = [Piece(bytes: [], farewell: [], last: true)]
            return (true, state.connection)
        }
        if let connection { connection.loop.execute { connection.cutStream(self) } }
        return first
    }

    /// Runs `handler` once when the stream ends, for whatever reason (at once if it has).
    public func onEnd(_ handler: @escaping @Sendable () -> Void) {
        let ended = state.withLock { state in
            if !state.ended { state.onEnd.append(handler) }
            return state.ended
        }
        if ended { handler() }
    }

    /// Whether half the limit or more waits unsent: a sender that can wait should, so that a
    /// client catching up at its own pace is not cut off.
    public var isBackedUp: Bool {
        state.withLock { $0.isBackedUp(bufferLimit) }
    }

    /// Whether the stream has ended.
    public var isEnded: Bool { state.withLock { $0.ended } }

    /// Bytes the client has taken so far: it reads while this grows, however far behind it is.
    public var bytesTaken: Int { state.withLock { $0.taken } }

    /// The client took `count` bytes from the connection's output (on its loop).
    func took(_ count: Int) {
        state.withLock { $0.taken += count }
    }

    /// The connection took the stream (on its loop): it writes what was sent meanwhile.
    func attach(_ connection: Connection) -> [Piece] {
        state.withLock { state in
            guard !state.ended else { return [] }
            state.connection = connection
            defer { state.pending = [] }
            return state.pending
        }
    }

    /// Bytes on their way to the connection: sent as they are, or (when the output is over the
    /// limit) replaced by the farewell; the last piece ends the stream.
    struct Piece: Sendable {
        var bytes: [UInt8]
        var farewell: [UInt8]
        var last: Bool
        /// Whoever holds the bytes for every stream sent them: written by reference when set.
        var shared: (any AnyObject & Sendable)? = nil
    }

    /// `count` bytes reached the connection's output (on its loop), which now holds `output`
    /// unsent bytes (nil when unknown: the connection is gone or ending).
    func delivered(_ count: Int, output: Int?) {
        state.withLock { state in
            state.inFlight = max(0, state.inFlight - count)
            if let output { state.output = output }
        }
    }

    /// The connection's output now holds `count` unsent bytes (on its loop).
    func outputChanged(_ count: Int) {
        state.withLock { $0.output = count }
    }

    /// Marks the stream ended and tells whoever asked; on the connection's loop, or when the
    /// response never reached a connection.
    func end() {
        let handlers = state.withLock { state -> [@Sendable () -> Void] in
            guard !state.ended else { return [] }
            state.ended = true
            state.connection = nil
            state.pending = []
            defer { state.onEnd = [] }
            return state.onEnd
        }
        for handler in handlers { handler() }
    }
}

/// Writes to many streams gathered by one sender, handed to each loop at once by ``flush()``:
/// an event sent to a thousand streams costs each loop a few jobs, not a thousand.
/// Used by one task at a time.
public final class StreamWriteBatch {
    private var loops: [(loop: EventLoop, writes: [StreamWrite])] = []

    public init() {}

    func add(_ piece: ResponseStream.Piece, of stream: ResponseStream, on connection: Connection) {
        let loop = connection.loop
        if let index = loops.firstIndex(where: { $0.loop === loop }) {
            loops[index].writes.append(StreamWrite(connection: connection, stream: stream, piece: piece))
        } else {
            loops.append((loop, [StreamWrite(connection: connection, stream: stream, piece: piece)]))
        }
    }

    /// Hands every loop its writes, in the order they were added.
    public func flush() {
        if DeliveryTrace.isEnabled {
            let now = DeliveryTrace.now()
            for index in loops.indices {
                for write in loops[index].writes.indices { loops[index].writes[write].queued = now }
            }
        }
        for (loop, writes) in loops { loop.streamWrites.append(writes, on: loop) }
        loops = []
    }
}

struct StreamWrite: Sendable {
    let connection: Connection
    let stream: ResponseStream
    let piece: ResponseStream.Piece
    /// When it was handed to its loop, while ``DeliveryTrace`` measures; 0 otherwise.
    var queued: UInt64 = 0

    static func stamp() -> UInt64 { DeliveryTrace.isEnabled ? DeliveryTrace.now() : 0 }
}

/// A loop's streamed writes, in the order they were sent: every piece for a stream goes through
/// it, batched or not, so none overtakes another. The loop writes them a chunk per job and goes
/// back to its other work (a create's answer, say) between chunks, instead of sending to a
/// thousand streams first.
final class StreamWriteQueue: Sendable {
    private struct State {
        var writes: [StreamWrite] = []
        /// Where the unwritten ones start.
        var head = 0
        var scheduled = false
    }

    private let state = Mutex(State())
    /// Writes per job.
    static let chunk = 64

    func append(_ writes: [StreamWrite], on loop: EventLoop) {
        let schedule = state.withLock { state in
            if state.writes.isEmpty {
                state.writes = writes
            } else {
                state.writes.append(contentsOf: writes)
            }
            defer { state.scheduled = true }
            return !state.scheduled
        }
        if schedule {
            guard DeliveryTrace.isEnabled, let queued = writes.first?.queued else {
                return loop.execute { [self] in drain(on: loop) }
            }
            loop.execute { [self] in
                DeliveryTrace.record(.loopWake, since: queued)
                drain(on: loop)
            }
        }
    }

    /// Writes a chunk (on the loop), and queues the next job when more wait.
    private func drain(on loop: EventLoop) {
        let (chunk, more) = state.withLock { state in
            let end = min(state.writes.count, state.head + Self.chunk)
            let chunk = Array(state.writes[state.head..<end])
            state.head = end
            if end == state.writes.count {
                state.writes.removeAll(keepingCapacity: state.writes.count <= 4096)
                state.head = 0
                state.scheduled = false
            }
            return (chunk, state.scheduled)
        }
        if DeliveryTrace.isEnabled, let first = chunk.first {
            DeliveryTrace.record(.handedOnToJob, since: first.queued)
            DeliveryTrace.record(.writesPerJob, UInt64(chunk.count))
            DeliveryTrace.wrote(onLoop: loop.index, count: chunk.count)
            for write in chunk {
                write.connection.writeStreamed(write.piece, of: write.stream)
                DeliveryTrace.record(.handedOnToSocket, since: write.queued)
                DeliveryTrace.record(
                    .commitToSocket, since: DeliveryTrace.lastCommit.load(ordering: .relaxed))
            }
        } else {
            for write in chunk { write.connection.writeStreamed(write.piece, of: write.stream) }
        }
        if more { loop.execute { [self] in drain(on: loop) } }
    }
}
