import Synchronization

/// Runs, failures by code and a duration histogram per handler or extension.
public final class ScriptMetrics: Sendable {
    /// Seconds; the last bucket is +Inf.
    static let bucketBounds: [Double] = [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5]

    struct Entry {
        var runs = 0
        var failures: [String: Int] = [:]
        var buckets = [Int](repeating: 0, count: ScriptMetrics.bucketBounds.count)
        var sum = 0.0
    }

    private let entries = Mutex<[String: Entry]>([:])
    private let starts = Atomic<Int>(0)

    /// Worker processes started so far, the first ones included: a rising count with no new
    /// scripts means workers are dying.
    public var workerStarts: Int { starts.load(ordering: .relaxed) }

    func noteWorkerStart() { starts.add(1, ordering: .relaxed) }

    func record(_ name: String, duration: Duration, failure: String?) {
        let seconds = Double(duration.components.seconds) + Double(duration.components.attoseconds) * 1e-18
        entries.withLock { entries in
            var entry = entries[name] ?? Entry()
            entry.runs += 1
            if let failure { entry.failures[failure, default: 0] += 1 }
            if let bucket = Self.bucketBounds.firstIndex(where: { seconds <= $0 }) {
                entry.buckets[bucket] += 1
            }
            entry.sum += seconds
            entries[name] = entry
        }
    }

    /// Runs of `name` so far (tests and `roost` diagnostics).
    public func runs(of name: String) -> Int { entries.withLock { $0[name]?.runs ?? 0 } }

    /// Every script's runs so far, by name.
    public var runCounts: [String: Int] { entries.withLock { $0.mapValues(\.runs) } }

    /// Failures of `name` so far, by error code.
    public func failures(of name: String) -> [String: Int] { entries.withLock { $0[name]?.failures ?? [:] } }

    /// Prometheus text lines.
    public var prometheusLines: [String] {
        let snapshot = entries.withLock { $0 }
        guard !snapshot.isEmpty else { return [] }
        var lines = [
            "# HELP roost_script_worker_starts_total Script worker processes started.",
            "# TYPE roost_script_worker_starts_total counter",
            "roost_script_worker_starts_total \(workerStarts)",
            "# HELP roost_script_runs_total Server-side script runs by handler or extension.",
            "# TYPE roost_script_runs_total counter",
        ]
        let names = snapshot.keys.sorted()
        for name in names {
            lines.append("roost_script_runs_total{script=\"\(name)\"} \(snapshot[name]!.runs)")
        }
        lines += [
            "# HELP roost_script_failures_total Failed script runs by error code.",
            "# TYPE roost_script_failures_total counter",
        ]
        for name in names {
            for (code, count) in snapshot[name]!.failures.sorted(by: { $0.key < $1.key }) {
                lines.append("roost_script_failures_total{script=\"\(name)\",code=\"\(code)\"} \(count)")
            }
        }
        lines += [
            "# HELP roost_script_duration_seconds Script run time, queueing and ff calls included.",
            "# TYPE roost_script_duration_seconds histogram",
        ]
        for name in names {
            let entry = snapshot[name]!
            var cumulative = 0
            for (index, bound) in Self.bucketBounds.enumerated() {
                cumulative += entry.buckets[index]
                lines.append(
                    "roost_script_duration_seconds_bucket{script=\"\(name)\",le=\"\(bound)\"} \(cumulative)")
            }
            lines.append("roost_script_duration_seconds_bucket{script=\"\(name)\",le=\"+Inf\"} \(entry.runs)")
            lines.append("roost_script_duration_seconds_sum{script=\"\(name)\"} \(entry.sum)")
            lines.append("roost_script_duration_seconds_count{script=\"\(name)\"} \(entry.runs)")
        }
        return lines
    }
}
