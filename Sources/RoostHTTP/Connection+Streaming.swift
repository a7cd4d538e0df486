import CLibEvent
import Dispatch

// Responses whose body is produced over time (see ``ResponseStream``): the connection sends the
// head, then whatever the stream sends, on its loop, until the stream or the client ends it.
// While it streams, the connection counts as handling a request: no read timeout applies, and
// nothing further is read from it but the client's close.
extension Connection {
    /// Sends the head of a response whose body streams and hands the connection to its stream,
    /// which stays busy handling: no read timeout and no next request while the body streams.
    func startStream(_ stream: ResponseStream, _ request: Request, _ response: Response, started: UInt64) {
        let head = serialize(response, omitBody: true, keepAlive: false)
        loop.server.observe(
            request: request, response: response, bytesSent: head.count,
            microseconds: elapsed(since: started, now: DispatchTime.now().uptimeNanoseconds) / 1000,
            loop: loop.index)
        streaming = stream
        // Every byte the client takes is progress the stream can show: a reader working through
        // an event of megabytes is not one that stopped reading. The callback goes with the
        // buffer, which the connection frees before it goes.
        if let bev, let output = bufferevent_get_output(bev) {
            evbuffer_add_cb(
                output,
                { _, info, context in
                    guard let info, info.pointee.n_deleted > 0, let context else { return }
                    let connection = Unmanaged<Connection>.fromOpaque(context).takeUnretainedValue()
                    connection.streaming?.took(info.pointee.n_deleted)
                }, Unmanaged.passUnretained(self).toOpaque())
        }
        write(head)
        for piece in stream.attach(self) { writeStreamed(piece, of: stream) }
        if loop.isDraining { endStream() }
    }

    /// Writes a piece of the stream, or its farewell when the output holds more than the
    /// stream's limit; the last piece ends the stream once it is sent.
    func writeStreamed(_ piece: ResponseStream.Piece, of stream: ResponseStream) {
        loop.preconditionInLoop()
        guard streaming === stream, machine.isStreaming, let bev, let output = bufferevent_get_output(bev)
        else {
            return stream.delivered(piece.bytes.count, output: nil)
        }
        let waiting = evbuffer_get_length(output)
        if !piece.last && waiting > 0 && waiting + piece.bytes.count > stream.bufferLimit {
            write(piece.farewell)
            stream.delivered(piece.bytes.count, output: nil)
            return endStream()
        }
        write(piece.bytes, shared: piece.shared)
        // One step: a sender asking between "no longer on its way" and "now in the output" would
        // see neither, send more, and have it refused here as over the limit.
        stream.delivered(
            piece.bytes.count, output: self.bev.map { evbuffer_get_length(bufferevent_get_output($0)) })
        if piece.last { return endStream() }
    }

    /// Ends the stream now, dropping its unsent output (see ``ResponseStream/cut()``).
    func cutStream(_ stream: ResponseStream) {
        loop.preconditionInLoop()
        guard streaming === stream else { return }
        close()
    }

    /// Below this, a streamed piece is copied: a reference costs more than the bytes.
    static let smallestSharedWrite = 2048

    /// Closes once the output is sent; the stream learns it ended now.
    func endStream() {
        loop.preconditionInLoop()
        streaming?.end()
        guard bev != nil, machine.streamEnded() else { return }
        if let bev { bufferevent_disable(bev, roost_ev_read()) }
        drainedIfFlushed()
    }
}

/// What a reference in an output buffer keeps alive: the array whose storage it points into,
/// and whoever counts those bytes (the feed's held-event budget).
final class SharedWrite: Sendable {
    let bytes: [UInt8]
    let owner: any AnyObject & Sendable

    init(bytes: [UInt8], owner: any AnyObject & Sendable) {
        self.bytes = bytes
        self.owner = owner
    }
}
