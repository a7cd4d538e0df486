import Synchronization

/// Counters for the Prometheus `/metrics` endpoint: requests by route and status, a latency
/// histogram per route, and open connections.
public final class HTTPMetrics: Sendable {
    /// Histogram bucket bounds in seconds.
    public static let bucketBounds: [Double] = [
        0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
    ]

    private struct RouteStatus: Hashable {
        let route: String
        let status: Int
    }

    private struct Histogram {
        var buckets = [UInt64](repeating: 0, count: HTTPMetrics.bucketBounds.count)
        var count: UInt64 = 0
        var sum: Double = 0
    }

    private struct Counters {
        var requests: [RouteStatus: UInt64] = [:]
        var latency: [String: Histogram] = [:]
    }

    /// One set of counters per event loop, so loops never contend; `render` adds them up.
    private let shards: [Shard]

    private final class Shard: Sendable {
        let counters = Mutex(Counters())
    }
    private let connections = Atomic<Int>(0)
    private let connectionsTotal = Atomic<Int>(0)
    /// Per event loop, as its last tick counted them.
    private let awaitingClient = Mutex<[Int: Int]>([:])

    /// Makes metrics with `shardCount` independent counter sets (one per event loop is ideal).
    public init(shardCount: Int = 16) {
        shards = (0..<max(1, shardCount)).map { _ in Shard() }
    }

    /// Connections open right now.
    public var openConnections: Int { connections.load(ordering: .relaxed) }

    /// Counts a new connection unless `limit` are open. Several loops accept at once, so the check
    /// and the count are one atomic step: a check followed by an add could admit one over the limit.
    func admitConnection(limit: Int) -> Bool {
        var current = connections.load(ordering: .relaxed)
        while current < limit {
            let (exchanged, actual) = connections.weakCompareExchange(
                expected: current, desired: current + 1, ordering: .relaxed)
            if exchanged {
                connectionsTotal.add(1, ordering: .relaxed)
                return true
            }
            current = actual
        }
        return false
    }

    func connectionClosed() { connections.subtract(1, ordering: .relaxed) }

    /// How many of a loop's connections wait for their client to read (counted once a second by
    /// the loop's tick, so the request path pays nothing).
    func setConnectionsAwaitingClient(_ count: Int, loop: Int) {
        awaitingClient.withLock { $0[loop] = count }
    }

    func record(route: String, status: Int, microseconds: UInt64, shard: Int = 0) {
        let seconds = Double(microseconds) / 1_000_000
        shards[shard % shards.count].counters.withLock { counters in
            counters.requests[RouteStatus(route: route, status: status), default: 0] += 1
            var histogram = counters.latency[route] ?? Histogram()
            if let bucket = Self.bucketBounds.firstIndex(where: { seconds <= $0 }) {
                histogram.buckets[bucket] += 1
            }
            histogram.count += 1
            histogram.sum += seconds
            counters.latency[route] = histogram
        }
    }

    /// The metrics in the Prometheus text exposition format.
    public func render() -> String {
        var snapshot = Counters()
        for shard in shards {
            let part = shard.counters.withLock { $0 }
            snapshot.requests.merge(part.requests, uniquingKeysWith: +)
            snapshot.latency.merge(part.latency) { lhs, rhs in
                Histogram(
                    buckets: zip(lhs.buckets, rhs.buckets).map(+), count: lhs.count + rhs.count,
                    sum: lhs.sum + rhs.sum)
            }
        }
        var lines: [String] = []
        lines.append("# HELP roost_http_requests_total HTTP requests answered, by route and status.")
        lines.append("# TYPE roost_http_requests_total counter")
        for (key, count) in snapshot.requests.sorted(by: {
            ($0.key.route, $0.key.status) < ($1.key.route, $1.key.status)
        }) {
            lines.append(
                "roost_http_requests_total{route=\"\(Self.escape(key.route))\",status=\"\(key.status)\"} \(count)"
            )
        }
        lines.append(
            "# HELP roost_http_request_duration_seconds Time from a whole request received to its reply queued."
        )
        lines.append("# TYPE roost_http_request_duration_seconds histogram")
        for (route, histogram) in snapshot.latency.sorted(by: { $0.key < $1.key }) {
            let label = Self.escape(route)
            var cumulative: UInt64 = 0
            for (bound, count) in zip(Self.bucketBounds, histogram.buckets) {
                cumulative += count
                lines.append(
                    "roost_http_request_duration_seconds_bucket{route=\"\(label)\",le=\"\(bound)\"} \(cumulative)"
                )
            }
            lines.append(
                "roost_http_request_duration_seconds_bucket{route=\"\(label)\",le=\"+Inf\"} \(histogram.count)"
            )
            lines.append("roost_http_request_duration_seconds_sum{route=\"\(label)\"} \(histogram.sum)")
            lines.append("roost_http_request_duration_seconds_count{route=\"\(label)\"} \(histogram.count)")
        }
        lines.append("# HELP roost_http_open_connections Client connections open now.")
        lines.append("# TYPE roost_http_open_connections gauge")
        lines.append("roost_http_open_connections \(openConnections)")
        lines.append(
            "# HELP roost_http_connections_awaiting_client Connections not read from because their client leaves too many answers unread."
        )
        lines.append("# TYPE roost_http_connections_awaiting_client gauge")
        lines.append(
            "roost_http_connections_awaiting_client \(awaitingClient.withLock { $0.values.reduce(0, +) })")
        lines.append("# HELP roost_http_connections_total Client connections accepted since start.")
        lines.append("# TYPE roost_http_connections_total counter")
        lines.append("roost_http_connections_total \(connectionsTotal.load(ordering: .relaxed))")
        return lines.joined(separator: "\n") + "\n"
    }

    private static func escape(_ label: String) -> String {
        label.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
    }
}
