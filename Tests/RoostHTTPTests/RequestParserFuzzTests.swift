import Foundation
import Synchronization
import Testing

@testable import RoostHTTP

/// A seeded, deterministic fuzzer of the request parser: valid requests of every framing, mutated
/// (bytes flipped, inserted, deleted, duplicated), fed in pieces of random size. Whatever arrives,
/// the parser must neither trap nor loop, and every outcome is a request within the limits or a
/// failure with a client-error status and a code. `ROOST_FUZZ_SEED` and `ROOST_FUZZ_COUNT` replay
/// or extend a run.
@Suite("HTTP request parser fuzzing")
struct RequestParserFuzzTests {
    static let seed = UInt64(ProcessInfo.processInfo.environment["ROOST_FUZZ_SEED"] ?? "") ?? 0x5EED_2026
    static let count = Int(ProcessInfo.processInfo.environment["ROOST_FUZZ_COUNT"] ?? "") ?? 1_000_000
    static let maxBody = 64
    static let maxStreamed = 128

    static var limits: RequestLimits {
        var limits = RequestLimits(maxHeaderBytes: 512, maxHeaderCount: 8, maxBodyBytes: maxBody)
        limits.streamedBodyLimit = { $0.target.hasPrefix("/up") ? maxStreamed : nil }
        // Bodies over 8 bytes (and chunked ones) are announced before they are taken.
        limits.announcedBodiesOver = 8
        return limits
    }

    /// How the inputs ended, so a run shows it reached past the head.
    struct Tally {
        var requests = 0
        var streamed = 0
        var failures: [Int: Int] = [:]

        mutating func add(_ other: Tally) {
            requests += other.requests
            streamed += other.streamed
            failures.merge(other.failures, uniquingKeysWith: +)
        }

        var summary: String {
            let statuses = failures.keys.sorted().map { "\($0): \(failures[$0]!)" }.joined(separator: ", ")
            return "\(requests) requests (\(streamed) streamed), failures by status [\(statuses)]"
        }
    }

    /// What a parse came to, independent of how the bytes were split.
    struct Outcome: Equatable {
        /// A hash of each request's method, target, header count and body.
        var requests: [Int] = []
        var failed = false
    }

    @Test("a million mutated requests in random pieces: no trap, only requests or 4xx failures")
    func fuzzParser() async {
        let workers = max(1, min(4, ProcessInfo.processInfo.activeProcessorCount))
        let share = (Self.count + workers - 1) / workers
        // On threads of their own: a minute of work on the cooperative pool would starve the
        // suite's other tests.
        let started = ContinuousClock.now
        let results = await withCheckedContinuation { continuation in
            let collected = Mutex<(inputs: Int, problems: [String], tally: Tally, finished: Int)>(
                (0, [], Tally(), 0))
            for worker in 0..<workers {
                Thread {
                    let (inputs, problems, tally) = Self.fuzz(worker: worker, share: share)
                    let all = collected.withLock { state -> (Int, [String], Tally)? in
                        state.inputs += inputs
                        state.problems += problems
                        state.tally.add(tally)
                        state.finished += 1
                        return state.finished == workers ? (state.inputs, state.problems, state.tally) : nil
                    }
                    if let all { continuation.resume(returning: all) }
                }.start()
            }
        }
        print(
            "request parser fuzzer: \(results.0) inputs, seed \(Self.seed), \(ContinuousClock.now - started): \(results.2.summary)"
        )
        #expect(results.0 >= Self.count)
        #expect(results.1.isEmpty, "\(results.1.prefix(5))")
    }

    /// One worker's share of the inputs, from its own seed.
    static func fuzz(worker: Int, share: Int) -> (Int, [String], Tally) {
        var generator = FuzzRequestGenerator(seed: seed &+ UInt64(worker) &* 0x9E37_79B9)
        var problems: [String] = []
        var tally = Tally()
        var ignored = Tally()
        let inputs = max(0, min(share, count - worker * share))
        for index in 0..<inputs {
            let input = generator.input()
            let pieces = run(input, generator: &generator, problems: &problems, tally: &tally)
            // Every eighth input again in one piece: the split must not change the result.
            if index % 8 == 0 {
                var whole = generator
                if run(input, wholeInOne: true, generator: &whole, problems: &problems, tally: &ignored)
                    != pieces
                {
                    problems.append("split changed the outcome of \(show(input))")
                }
            }
            if problems.count > 5 { break }
        }
        return (inputs, problems, tally)
    }

    /// Parses one input and checks every event; returns what it came to.
    static func run(
        _ input: [UInt8], wholeInOne: Bool = false, generator: inout FuzzRequestGenerator,
        problems: inout [String], tally: inout Tally
    ) -> Outcome {
        var parser = RequestParser(limits: limits)
        var outcome = Outcome()
        var offset = 0
        var streamed: [UInt8]?
        var events = 0
        while offset < input.count {
            let size = wholeInOne ? input.count : generator.pieceSize(remaining: input.count - offset)
            parser.append(Array(input[offset..<offset + size]))
            offset += size
            while true {
                events += 1
                if events > 10 * input.count + 100 {
                    problems.append("no progress on \(show(input))")
                    return outcome
                }
                switch parser.next() {
                case .needMore:
                    break
                case .failure(let error):
                    let clientError = (400..<500).contains(error.status)
                    // RFC 9112 asks for 501 on an unknown transfer coding and 505 on another version.
                    let protocolRefusal = [501, 505].contains(error.status)
                    if !(clientError || protocolRefusal) || error.code.rawValue.isEmpty
                        || !error.code.rawValue.utf8.allSatisfy({ $0 == 95 || (97...122).contains($0) })
                    {
                        problems.append("failure \(error) for \(show(input))")
                    }
                    outcome.failed = true
                    tally.failures[error.status, default: 0] += 1
                    return outcome
                case .streamStart(let head):
                    if streamed != nil { problems.append("nested stream for \(show(input))") }
                    if !head.target.hasPrefix("/up") { problems.append("stream for \(head.target)") }
                    streamed = []
                    continue
                case .bodyStart(let head):
                    if head.target.hasPrefix("/up") {
                        problems.append("announced a streamed body for \(head.target)")
                    }
                    continue
                case .bodyPart(let part):
                    guard streamed != nil, !part.isEmpty else {
                        problems.append("stray body part for \(show(input))")
                        return outcome
                    }
                    streamed! += part
                    if streamed!.count > maxStreamed {
                        problems.append("streamed over the limit: \(show(input))")
                    }
                    continue
                case .request(let head, let body):
                    let whole = streamed ?? body
                    if streamed != nil && !body.isEmpty { problems.append("buffered and streamed body") }
                    if streamed == nil && body.count > maxBody { problems.append("body over the limit") }
                    if head.method.isEmpty || !(head.target.hasPrefix("/") || head.target == "*") {
                        problems.append("odd head \(head) for \(show(input))")
                    }
                    var hasher = Hasher()
                    hasher.combine(head.method)
                    hasher.combine(head.target)
                    hasher.combine(head.headers.count)
                    hasher.combine(whole)
                    outcome.requests.append(hasher.finalize())
                    tally.requests += 1
                    if streamed != nil { tally.streamed += 1 }
                    streamed = nil
                    continue
                }
                break
            }
        }
        return outcome
    }

    static func show(_ input: [UInt8]) -> String {
        String(decoding: input, as: UTF8.self).debugDescription
    }

    @Test("the Range parser: a million generated headers, no trap, every part inside the size")
    func fuzzRanges() {
        var generator = FuzzRequestGenerator(seed: Self.seed)
        let pieces = [
            "bytes=", "BYTES=", "bytes", "=", "-", "--", ",", " ", "+", "0", "00", "9",
            "18446744073709551616",
            "9223372036854775807", "9223372036854775806", "99999999999999999999999999", "\t", "١", "x",
        ]
        let sizes = [0, 1, 2, 10, 1 << 20, Int.max - 1, Int.max]
        var problems: [String] = []
        let count = Self.count
        for _ in 0..<count {
            var header = generator.next(4) == 0 ? "" : "bytes="
            for _ in 0..<generator.next(5) {
                header +=
                    generator.next(3) == 0
                    ? String(generator.next(100_000)) : pieces[generator.next(pieces.count)]
            }
            let size = generator.next(3) == 0 ? generator.next(1000) : sizes[generator.next(sizes.count)]
            switch ByteRange(header: header, size: size) {
            case .whole: break
            case .unsatisfiable: if header.isEmpty { problems.append("empty header unsatisfiable") }
            case .part(let part):
                if part.isEmpty || part.lowerBound < 0 || part.upperBound > size {
                    problems.append("\(header.debugDescription) size \(size) gave \(part)")
                }
            }
            if problems.count > 5 { break }
        }
        print("range parser fuzzer: \(count) headers, seed \(Self.seed)")
        #expect(problems.isEmpty, "\(problems)")
    }
}
