import Foundation
import Synchronization

/// Where a realtime delivery waits, hop by hop, for measurement only (issue 34): on when the
/// environment variable `ROOST_TRACE_DELIVERY` names a file, which gets each hop's distribution
/// when the change feed shuts down. Off, every call site costs one load of ``isEnabled``.
/// Here, below the HTTP layer, the feed and the drivers, because the hops cross all of them.
public enum DeliveryTrace {
    /// The hops, in the order a change goes through them.
    public enum Hop: Int, CaseIterable, Sendable {
        /// The writer's commit (its observers called) → the fan-out task running again.
        case commitToWoken
        /// The fan-out running → the change log's batch read.
        case wokenToRead
        /// The batch read → a change's writes handed to the loops (once per change).
        case readToHandedOn
        /// Writes handed to an idle loop → its first job running: the loop's wake.
        case loopWake
        /// Writes handed to a loop → the loop's job that writes them starting (once per job).
        case handedOnToJob
        /// Writes handed to a loop → one stream's bytes given to its socket (once per write).
        case handedOnToSocket
        /// The commit → one stream's bytes given to its socket (once per write).
        case commitToSocket
        /// The commit → a response (not a stream) written by a loop: the create's answer.
        case commitToAnswer
        /// Streamed writes per loop job.
        case writesPerJob
    }

    /// The file the distributions go to; nil when tracing is off.
    public static let path: String? = ProcessInfo.processInfo.environment["ROOST_TRACE_DELIVERY"]
    public static let isEnabled = path != nil

    /// When the last commit that may have appended changes was made.
    public static let lastCommit = Atomic<UInt64>(0)
    /// The commit the fan-out last woke for: a wake for a new stream is not timed as a commit's.
    public static let lastWokenCommit = Atomic<UInt64>(0)

    private static let samples = Mutex<[[UInt64]]>(Array(repeating: [], count: Hop.allCases.count))
    private static let perLoop = Mutex<[Int: Int]>([:])
    /// Samples kept per hop at most (8 bytes each).
    private static let limit = 4_000_000

    /// Monotonic nanoseconds.
    @inline(__always)
    public static func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

    public static func record(_ hop: Hop, _ value: UInt64) {
        samples.withLock { all in
            if all[hop.rawValue].count < limit { all[hop.rawValue].append(value) }
        }
    }

    public static func record(_ hop: Hop, since start: UInt64) {
        let end = now()
        record(hop, end > start ? end - start : 0)
    }

    /// One streamed write went out on loop `index`.
    public static func wrote(onLoop index: Int, count: Int) {
        perLoop.withLock { $0[index, default: 0] += count }
    }

    /// The distributions, one line per hop (milliseconds, counts for ``Hop/writesPerJob``).
    public static func report() -> String {
        let all = samples.withLock { $0 }
        var lines = ["hop\tcount\tp10\tp50\tp90\tp99\tmax"]
        for hop in Hop.allCases {
            let sorted = all[hop.rawValue].sorted()
            guard !sorted.isEmpty else {
                lines.append("\(hop)\t0")
                continue
            }
            let scale = hop == .writesPerJob ? 1.0 : 1e6
            func at(_ fraction: Double) -> String {
                let value =
                    Double(sorted[min(sorted.count - 1, Int(fraction * Double(sorted.count)))]) / scale
                return String(format: "%.3f", value)
            }
            lines.append(
                "\(hop)\t\(sorted.count)\t\(at(0.1))\t\(at(0.5))\t\(at(0.9))\t\(at(0.99))\t\(at(1))")
        }
        let loops = perLoop.withLock { $0 }.sorted { $0.key < $1.key }
        lines.append(
            "streamed writes per loop: " + loops.map { "loop \($0.key): \($0.value)" }.joined(separator: ", ")
        )
        return lines.joined(separator: "\n") + "\n"
    }

    /// Writes ``report()`` to ``path``, when tracing.
    public static func dump() {
        guard let path else { return }
        try? report().write(toFile: path, atomically: true, encoding: .utf8)
    }
}
