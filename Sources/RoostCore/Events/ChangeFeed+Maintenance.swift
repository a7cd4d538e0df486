import Foundation
import RoostStore

/// The feed's upkeep: heartbeats, token checks, trimming the change log, what streams hold.
extension ChangeFeed {
    /// The bytes of events that streams hold now, unsent or being sent, each event once.
    public var heldEventBytes: Int { heldBytes.value.load(ordering: .relaxed) }

    /// Whether the streams hold more than half of the event bytes they may: streams that stay
    /// behind are then cut, before new events have to be refused to everyone.
    var holdsTooMuch: Bool { heldEventBytes > limits.heldBytes / 2 }

    /// Every heartbeat: streams whose token expired end, and the fan-out is asked to send the
    /// others their heartbeat (see ``sendHeartbeats()``).
    func heartbeats() async {
        while !Task.isCancelled {
            try? await Task.sleep(for: limits.heartbeat)
            if Task.isCancelled { return }
            for stream in state.withLock({ Array($0.streams.values) }) {
                if let caller = stream.caller, await !tokenIsLive(caller.tokenId) {
                    // A deactivated user's tokens stop too: say which it was.
                    let reason =
                        await refreshCaller(caller) == nil
                        ? ": the account is no longer active\n\n"
                        : ": the token expired or was revoked; log in again\n\n"
                    stream.sink.finish(Array(reason.utf8))
                }
            }
            heartbeatDue.store(true, ordering: .relaxed)
            wake.yield()
        }
    }

    /// A comment carrying each stream's position (an `id:` without data moves an EventSource's
    /// last event id without an event). Only the fan-out calls it, between rounds: what the
    /// position covers has been sent, and nothing newer can be sent before it.
    func sendHeartbeats() {
        let streams = state.withLock { Array($0.streams.values) }
        let writes = EventBatch()
        var sent: [(id: Int, position: Int64)] = []
        for stream in streams {
            let bytes = EventBytes(Array(": heartbeat\nid: \(stream.position)\n\n".utf8), counter: heldBytes)
            // A backed-up client has events waiting: it needs no heartbeat.
            let outcome = stream.sink.send(
                bytes, farewell: EventFormat.farewell(stream.delivered), unlessBackedUp: writes)
            if outcome == .sent { sent.append((stream.id, stream.position)) }
        }
        writes.flush()
        state.withLock { state in
            for (id, position) in sent {
                guard let delivered = state.streams[id]?.delivered else { continue }
                state.streams[id]?.delivered = max(position, delivered)
            }
        }
    }

    /// Trims the log outside the retention window, a bounded batch per write, so other writes
    /// interleave.
    func trimming() async {
        while !Task.isCancelled {
            await trimLog()
            try? await Task.sleep(for: limits.trimInterval)
        }
    }

    /// Trims until nothing is left outside the window; returns how many entries went.
    @discardableResult
    public func trimLog() async -> Int {
        var removed = 0
        while !Task.isCancelled {
            do {
                let now = Int64(Date().timeIntervalSince1970 * 1000)
                let count = try await log.trim(limits.retention, now: now, batch: limits.trimBatch)
                removed += count
                if count > 0 {
                    let window = try await log.window()
                    state.withLock { $0.trimmedThrough = max($0.trimmedThrough, window.trimmedThrough) }
                }
                if count < limits.trimBatch { break }
            } catch {
                logger("trimming the change log failed: \(error)")
                break
            }
        }
        return removed
    }
}
