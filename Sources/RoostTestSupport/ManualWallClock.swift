import RoostCore
import Synchronization

/// A wall clock that moves only when a test moves it, so that expiry, throttle windows and
/// lifetimes are reached by ``advance(seconds:)`` instead of by waiting.
public final class ManualWallClock: WallClock {
    private let now: Atomic<Int64>

    /// Starts at `milliseconds` since 1970 (2026-09-21 by default).
    public init(milliseconds: Int64 = 1_790_000_000_000) {
        now = Atomic(milliseconds)
    }

    public func nowMilliseconds() -> Int64 { now.load(ordering: .relaxed) }

    public func advance(seconds: Int64) { advance(milliseconds: seconds * 1000) }

    public func advance(milliseconds: Int64) { now.add(milliseconds, ordering: .relaxed) }
}
