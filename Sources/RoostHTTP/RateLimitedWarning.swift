import Dispatch
import Synchronization

/// Lets a warning through once a minute at most, however often its cause repeats, and counts
/// the ones held back so the next line can say how many there were.
final class RateLimitedWarning: Sendable {
    private let state = Mutex<(lastLogged: UInt64?, suppressed: Int)>((nil, 0))
    private static let interval: UInt64 = 60_000_000_000

    /// Nil when this one is held back; else how many were held back since the last one logged.
    /// Without `now`, the clock is read under the lock, so the times logged only grow; a `now`
    /// earlier than the last one logged (read before another thread took the lock) is held back.
    func admit(now: UInt64? = nil) -> Int? {
        state.withLock { warning -> Int? in
            let now = now ?? DispatchTime.now().uptimeNanoseconds
            if let last = warning.lastLogged, elapsed(since: last, now: now) < Self.interval {
                warning.suppressed += 1
                return nil
            }
            defer { warning = (now, 0) }
            return warning.suppressed
        }
    }
}
