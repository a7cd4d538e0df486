/// Nanoseconds from `start` to `now` on the monotonic clock (`DispatchTime.uptimeNanoseconds`),
/// 0 when `now` is the earlier: a time read on another thread, or read before `start` was
/// stored, is late by a moment, and an unsigned subtraction must never trap on it.
@inline(__always)
func elapsed(since start: UInt64, now: UInt64) -> UInt64 {
    now >= start ? now - start : 0
}
