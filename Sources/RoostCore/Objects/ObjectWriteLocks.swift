import Synchronization

/// One write at a time per object in this process: concurrent writes to a hot object queue up
/// instead of each losing the optimistic race again and again. Writes from other processes are
/// still caught by the version check in the store.
final class ObjectWriteLocks: Sendable {
    private struct State {
        var held: Set<String> = []
        var waiting: [String: [CheckedContinuation<Void, Never>]] = [:]
    }

    private let state = Mutex(State())

    /// Runs `body` once no other write of this object in this process is running.
    func withLock<T>(_ key: String, _ body: () async throws -> T) async throws -> T {
        await acquire(key)
        defer { release(key) }
        return try await body()
    }

    private func acquire(_ key: String) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let acquired = state.withLock { state in
                if state.held.insert(key).inserted { return true }
                state.waiting[key, default: []].append(continuation)
                return false
            }
            if acquired { continuation.resume() }
        }
    }

    /// Hands the lock to the next waiter in line, or frees it.
    private func release(_ key: String) {
        let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard var line = state.waiting[key], !line.isEmpty else {
                state.held.remove(key)
                return nil
            }
            let next = line.removeFirst()
            state.waiting[key] = line.isEmpty ? nil : line
            return next
        }
        next?.resume()
    }
}
