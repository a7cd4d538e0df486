import Dispatch
import Synchronization

/// Lets a warning through once a minute at most, however often its cause repeats, and counts
/// the ones held back so the next line can say how many there were.
final class RateLimitedWarning: Sendable {
    private let state = Mutex<(lastLogged: UInt64?, suppressed: Int)>((nil, 0))
    private static let interval: UInt64 = 60_000_000_000

    /// Nil when this one is held back; else how many were held back since the last one logged.
    func admit(now: UInt64 = DispatchTime.now().uptimeNanoseconds) -> Int? {
        state.withLock { warning -> Int? in
            if let last = warning.lastLogged, now - last < Self.interval {
                warning.suppressed += 1
                return nil
            }
            defer { warning = (now, 0) }
            return warning.suppressed
        }
    }
}
