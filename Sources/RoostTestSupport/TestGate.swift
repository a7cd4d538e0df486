import Synchronization

/// A gate tests hold work at: code under test calls ``pass()`` and waits until the test calls
/// ``open()``; the test waits for the first arrival with ``arrival()`` instead of polling.
public final class TestGate: Sendable {
    private struct State {
        var isOpen = false
        var arrivals = 0
        var passers: [CheckedContinuation<Void, Never>] = []
        var watchers: [CheckedContinuation<Void, Never>] = []
    }

    private let state = Mutex(State())

    public init() {}

    /// How many callers have reached the gate so far.
    public var arrivals: Int { state.withLock { $0.arrivals } }

    /// Waits until the gate is open (at once when it is). Cancellation does not end the wait: a
    /// held caller leaves only through ``open()``.
    public func pass() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let (proceed, watchers) = state.withLock { state in
                state.arrivals += 1
                defer { state.watchers = [] }
                if state.isOpen { return (true, state.watchers) }
                state.passers.append(continuation)
                return (false, state.watchers)
            }
            for watcher in watchers { watcher.resume() }
            if proceed { continuation.resume() }
        }
    }

    /// Returns once a caller has reached the gate.
    public func arrival() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let arrived = state.withLock { state in
                if state.arrivals > 0 { return true }
                state.watchers.append(continuation)
                return false
            }
            if arrived { continuation.resume() }
        }
    }

    /// Lets every waiting caller and every later one through.
    public func open() {
        let passers = state.withLock { state in
            state.isOpen = true
            defer { state.passers = [] }
            return state.passers
        }
        for passer in passers { passer.resume() }
    }
}
