import Synchronization

/// Counts the streamed bodies (uploads) being received, in all and per client address, so that
/// neither one client nor many can hold the disk and the connections with slow uploads.
final class UploadSlots: Sendable {
    private struct Counts {
        var total = 0
        var byClient: [String: Int] = [:]
    }
    private let counts = Mutex(Counts())

    /// Takes a slot for `client`; false when `total` or `perClient` are reached.
    func acquire(_ client: String, total: Int, perClient: Int) -> Bool {
        counts.withLock { counts in
            let mine = counts.byClient[client, default: 0]
            guard counts.total < total, mine < perClient else { return false }
            counts.total += 1
            counts.byClient[client] = mine + 1
            return true
        }
    }

    func release(_ client: String) {
        counts.withLock { counts in
            counts.total -= 1
            let mine = counts.byClient[client, default: 1] - 1
            counts.byClient[client] = mine > 0 ? mine : nil
        }
    }

    /// Uploads in flight now, for tests and metrics.
    var inFlight: Int { counts.withLock { $0.total } }
}
