import Synchronization

/// Runs and failures of ASYNC script handlers, by handler, for `/metrics`.
public final class AsyncHandlerMetrics: Sendable {
    public struct Counts: Sendable, Equatable {
        /// Runs started, retries included.
        public var runs = 0
        /// Runs that failed.
        public var failures = 0
        /// Events given up after the last attempt failed.
        public var gaveUp = 0

        public init(runs: Int = 0, failures: Int = 0, gaveUp: Int = 0) {
            self.runs = runs
            self.failures = failures
            self.gaveUp = gaveUp
        }
    }

    private let counts = Mutex<[String: Counts]>([:])

    public init() {}

    /// The counts so far, by handler name.
    public var snapshot: [String: Counts] { counts.withLock { $0 } }

    func ran(_ handler: String) { counts.withLock { $0[handler, default: Counts()].runs += 1 } }
    func failed(_ handler: String) { counts.withLock { $0[handler, default: Counts()].failures += 1 } }
    func gaveUp(_ handler: String) { counts.withLock { $0[handler, default: Counts()].gaveUp += 1 } }

    /// The counters in Prometheus' text format, each line ending in a newline; empty before any run.
    public func render() -> String {
        let counts = snapshot.sorted { $0.key < $1.key }
        guard !counts.isEmpty else { return "" }
        var text = ""
        let families: [(String, String, KeyPath<Counts, Int>)] = [
            ("roost_async_handler_runs_total", "Runs of ASYNC script handlers, retries included.", \.runs),
            ("roost_async_handler_failures_total", "Runs of ASYNC script handlers that failed.", \.failures),
            (
                "roost_async_handler_given_up_total",
                "Events an ASYNC handler gave up on after its last attempt.", \.gaveUp
            ),
        ]
        for (name, help, value) in families {
            text += "# HELP \(name) \(help)\n# TYPE \(name) counter\n"
            for (handler, count) in counts {
                text += "\(name){handler=\"\(Self.escaped(handler))\"} \(count[keyPath: value])\n"
            }
        }
        return text
    }

    /// A label value as Prometheus' text format writes it.
    static func escaped(_ value: String) -> String {
        value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            .replacingOccurrences(of: "\n", with: "\\n")
    }
}
