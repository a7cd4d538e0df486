// The once-a-second check of a connection's clocks: idle, slow and lingering connections end.
extension ConnectionStateMachine {
    enum Deadline: Equatable {
        case none
        case close
        /// The handshake took too long (`timeout` seconds): warn, then close.
        case handshakeTimedOut(timeout: Int)
        /// 408: the upload fell below the minimum rate.
        case uploadTooSlow
        /// 408: the request did not arrive within the read timeout.
        case requestTimedOut
    }

    /// The once-a-second check: idle, slow and lingering connections end.
    func deadline(now: UInt64) -> Deadline {
        switch state {
        case .lingering(let until):
            return now > until ? .close : .none
        case .handshaking:
            let timeout = max(1, min(timeouts.handshake, timeouts.read))
            return elapsed(since: waitingSince, now: now) > Self.seconds(timeout)
                ? .handshakeTimedOut(timeout: timeout) : .none
        case .receivingUpload(let upload):
            if Self.uploadTooSlow(
                nanoseconds: elapsed(since: upload.startedAt, now: now), bytes: upload.bytes,
                readTimeout: timeouts.read, minimumRate: timeouts.minimumUploadRate)
            {
                return .uploadTooSlow
            }
        case .reading, .waitingForSink:
            break
        case .admitting, .handling, .streaming, .waitingForDrain, .closing, .closed:
            return .none
        }
        if let firstByteAt {
            return elapsed(since: firstByteAt, now: now) > Self.seconds(timeouts.read)
                ? .requestTimedOut : .none
        }
        return elapsed(since: waitingSince, now: now) > Self.seconds(timeouts.idle) ? .close : .none
    }

    private static func seconds(_ count: Int) -> UInt64 { UInt64(count) * 1_000_000_000 }

    /// Whether an upload fell below the minimum rate: after `readTimeout` seconds, each further
    /// second must have brought `minimumRate` bytes. In floating point: in whole nanoseconds,
    /// the time allowed for a blob of 18 GB at 1 byte per second overflows 64 bits.
    static func uploadTooSlow(nanoseconds: UInt64, bytes: Int, readTimeout: Int, minimumRate: Int) -> Bool {
        let allowed = Double(readTimeout) + Double(bytes) / Double(max(1, minimumRate))
        return Double(nanoseconds) > allowed * 1e9
    }
}
