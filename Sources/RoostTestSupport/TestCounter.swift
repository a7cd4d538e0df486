import Synchronization

/// A count that tests wait on instead of polling: workers ``add()``, the test waits with
/// ``reach(_:)``, which returns once the count gets there, or false once the workers said
/// ``finish()`` without getting there (so a failing worker fails the test instead of hanging it).
public final class TestCounter: Sendable {
    private struct State {
        var count = 0
        var finished = false
        var waiters: [(target: Int, continuation: CheckedContinuation<Bool, Never>)] = []
    }

    private let state = Mutex(State())

    public init() {}

    public var count: Int { state.withLock { $0.count } }

    public func add(_ amount: Int = 1) {
        let due = state.withLock { state in
            state.count += amount
            let count = state.count
            let due = state.waiters.filter { $0.target <= count }
            state.waiters.removeAll { $0.target <= count }
            return due
        }
        for waiter in due { waiter.continuation.resume(returning: true) }
    }

    /// No more will be added: waits not yet met end with false.
    public func finish() {
        let waiting = state.withLock { state in
            state.finished = true
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiting { waiter.continuation.resume(returning: false) }
    }

    /// Waits until the count is at least `target`; false if ``finish()`` came first.
    public func reach(_ target: Int) async -> Bool {
        await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            let answer: Bool? = state.withLock { state in
                if state.count >= target { return true }
                if state.finished { return false }
                state.waiters.append((target, continuation))
                return nil
            }
            if let answer { continuation.resume(returning: answer) }
        }
    }
}
