import Synchronization

/// Push deliveries' counters and the queue's depth, for `/metrics`.
public final class PushMetrics: Sendable {
    private let counts = Mutex((sent: 0, failed: 0, invalidated: 0, retried: 0, uncertain: 0))
    private let depth = Atomic<Int>(0)

    public init() {}

    /// Deliveries the provider accepted.
    public var sent: Int { counts.withLock { $0.sent } }
    /// Deliveries given up or refused for good.
    public var failed: Int { counts.withLock { $0.failed } }
    /// Device tokens deleted on the provider's word.
    public var invalidated: Int { counts.withLock { $0.invalidated } }
    /// Sends to be tried again.
    public var retried: Int { counts.withLock { $0.retried } }
    /// Deliveries not finished, as the dispatcher last counted them.
    public var queueDepth: Int { depth.load(ordering: .relaxed) }

    func countSent() { counts.withLock { $0.sent += 1 } }
    func countFailed() { counts.withLock { $0.failed += 1 } }
    func countInvalidated() { counts.withLock { $0.invalidated += 1 } }
    func countRetried() { counts.withLock { $0.retried += 1 } }
    func countUncertain() { counts.withLock { $0.uncertain += 1 } }
    public func setQueueDepth(_ value: Int) { depth.store(value, ordering: .relaxed) }

    /// The lines in Prometheus' text format, each ending in a newline.
    public func render() -> String {
        let counts = counts.withLock { $0 }
        var text = ""
        for (name, help, value) in [
            ("roost_push_sent_total", "Push deliveries the provider accepted.", counts.sent),
            (
                "roost_push_failed_total", "Push deliveries given up after retries or refused for good.",
                counts.failed
            ),
            (
                "roost_push_invalidated_total",
                "Device tokens deleted because the provider called them invalid.", counts.invalidated
            ),
            (
                "roost_push_retried_total", "Push sends to be tried again (429, 5xx, lost connections).",
                counts.retried
            ),
            (
                "roost_push_uncertain_total",
                "Push sends resent because a dispatcher stopped before recording their answer.",
                counts.uncertain
            ),
        ] {
            text += "# HELP \(name) \(help)\n# TYPE \(name) counter\n\(name) \(value)\n"
        }
        text += "# HELP roost_push_queue_depth Push deliveries waiting or in flight.\n"
        text += "# TYPE roost_push_queue_depth gauge\nroost_push_queue_depth \(queueDepth)\n"
        return text
    }
}
