import Synchronization

/// Lets each user have at most `limit` handler runs in the script pool at once, so one user's
/// burst of writes cannot keep everyone else's handlers waiting (or refused with `scripts_busy`).
/// A POST handler cannot be refused after its write committed: it waits here, in order, instead
/// of in the pool's shared queue. A PRE handler runs while its object is locked for the write,
/// where waiting on the user's other runs could wait on itself: it is refused instead, before
/// anything is written.
final class ScriptCallerGate: Sendable {
    private struct Entry {
        var running = 0
        var waiting: [CheckedContinuation<Void, Never>] = []
    }

    let limit: Int
    private let entries = Mutex<[String: Entry]>([:])

    init(limit: Int) { self.limit = max(1, limit) }

    /// Returns once `key` has a place.
    func enter(_ key: String) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let admitted = entries.withLock { entries in
                var entry = entries[key, default: Entry()]
                defer { entries[key] = entry }
                guard entry.running < limit else {
                    entry.waiting.append(continuation)
                    return false
                }
                entry.running += 1
                return true
            }
            if admitted { continuation.resume() }
        }
    }

    /// Takes a place for `key` if one is free now.
    func tryEnter(_ key: String) -> Bool {
        entries.withLock { entries in
            var entry = entries[key, default: Entry()]
            guard entry.running < limit else { return false }
            entry.running += 1
            entries[key] = entry
            return true
        }
    }

    /// Gives `key`'s place to the next of its runs waiting, or back.
    func leave(_ key: String) {
        let next = entries.withLock { entries -> CheckedContinuation<Void, Never>? in
            guard var entry = entries[key] else { return nil }
            if entry.waiting.isEmpty {
                entry.running -= 1
                entries[key] = entry.running > 0 ? entry : nil
                return nil
            }
            // The place passes on: `running` stays.
            let next = entry.waiting.removeFirst()
            entries[key] = entry
            return next
        }
        next?.resume()
    }

    /// Runs waiting for a place, for tests and metrics.
    var waiting: Int { entries.withLock { $0.values.reduce(0) { $0 + $1.waiting.count } } }
}
