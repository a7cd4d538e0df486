/// Deterministic requests for the parser fuzzer: a SplitMix64 stream drives a generator of
/// well-formed requests (every framing, chunk sizes, extensions, trailers, header counts and
/// lengths, pipelining) and a mutator that damages them the ways attackers and broken clients do.
struct FuzzRequestGenerator {
    private var state: UInt64
    /// Well-formed requests made once, which inputs combine and damage: making each input from
    /// scratch would cost more than parsing it.
    private var pool: [[UInt8]] = []

    init(seed: UInt64, poolSize: Int = 4096) {
        state = seed
        pool = (0..<poolSize).map { _ in request() }
    }

    mutating func nextRaw() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A number in `0..<bound`.
    mutating func next(_ bound: Int) -> Int { bound <= 1 ? 0 : Int(nextRaw() % UInt64(bound)) }

    mutating func chance(_ percent: Int) -> Bool { next(100) < percent }

    mutating func pick<T>(_ items: [T]) -> T { items[next(items.count)] }

    /// Mostly small pieces, sometimes everything left.
    mutating func pieceSize(remaining: Int) -> Int {
        switch next(4) {
        case 0: return 1
        case 1: return min(remaining, 1 + next(8))
        case 2: return min(remaining, 1 + next(64))
        default: return remaining
        }
    }

    /// One or two pipelined requests, mutated more often than not.
    mutating func input() -> [UInt8] {
        var bytes = pool[next(pool.count)]
        if chance(25) { bytes += pool[next(pool.count)] }
        if chance(50) {
            for _ in 0..<(1 + next(4)) { mutate(&bytes) }
        }
        return bytes
    }

    // Each list: what a client may send, then what it may not (picked one time in 25).
    static let methods = (["GET", "POST", "PUT", "HEAD", "DELETE", "PATCH", "OPTIONS"], ["G@T", "get", ""])
    static let targets = (
        ["/", "/health", "/up", "/up/load", "/a?b=c", "*"], ["/%zz", "http://x/", "/a b", ""]
    )
    static let versions = (["HTTP/1.1", "HTTP/1.0"], ["HTTP/2.0", "HTTP/1.10", "http/1.1", "HTTP/1.1 "])
    static let names = (
        ["X-A", "Accept", "Connection", "Expect", "Trailer", "Host"], ["Bad Name", "X\u{1}", ""]
    )
    static let values = (["1", "close", "keep-alive", "100-continue", "", "a\tb", "é"], ["\u{7F}", "a\rb"])

    /// Mostly something valid, sometimes not.
    mutating func pick(_ choices: ([String], [String])) -> String {
        chance(4) ? pick(choices.1) : pick(choices.0)
    }

    static let tokens: [[UInt8]] = [
        "\r\n", "\n", "\r", "-", "+", "0x", " ", ";", ":", "\t", "\0", "FFFFFFFFFFFFFFFFF",
        "Transfer-Encoding: chunked\r\n", "Content-Length: 5\r\n", "0\r\n\r\n", "\r\n\r\n",
    ].map { Array($0.utf8) }

    mutating func request() -> [UInt8] {
        var head: [UInt8] = []
        head.reserveCapacity(256)
        func add(_ text: String) { head.append(contentsOf: text.utf8) }
        add(pick(Self.methods))
        add(" ")
        add(pick(Self.targets))
        add(" ")
        add(pick(Self.versions))
        add("\r\n")
        if chance(90) { add("Host: x\r\n") }
        for _ in 0..<next(chance(10) ? 12 : 3) {
            add(pick(Self.names))
            add(": ")
            if chance(5) {
                head.append(contentsOf: repeatElement(UInt8(ascii: "v"), count: next(600)))
            } else {
                add(pick(Self.values))
            }
            add("\r\n")
        }
        let body = [UInt8](repeating: UInt8(ascii: "b"), count: chance(10) ? next(200) : next(12))
        var payload: [UInt8] = []
        switch next(10) {
        case 0, 1:
            break
        case 2, 3:
            add("Content-Length: \(body.count)\r\n")
            payload = body
        case 4:
            add("Content-Length: \(body.count + next(5) - 2)\r\n")
            payload = body
        case 5:
            add("Content-Length: \(body.count)\r\nContent-Length: \(pick([body.count, body.count + 1]))\r\n")
            payload = body
        case 6:
            add("Transfer-Encoding: chunked\r\nContent-Length: \(body.count)\r\n")
            payload = chunked(body)
        case 7:
            add("Transfer-Encoding: " + pick(["gzip", "chunked, chunked", "identity", "chunked "]) + "\r\n")
            payload = chunked(body)
        default:
            add("Transfer-Encoding: " + pick(["chunked", "Chunked", "CHUNKED"]) + "\r\n")
            payload = chunked(body)
        }
        if chance(10) { add("Expect: 100-continue\r\n") }
        add("\r\n")
        return head + payload
    }

    static let badSizes = ["-1", "+5", " 5", "-0", "0x5", "FFFFFFFFFFFFFFFF", "1;a\nb"]
    static let extensions = [
        ";ext", ";e=v", " ;e=\"q\"", ";\u{1}", ";" + String(repeating: "e", count: 1100),
    ]
    static let trailers = (["T: 1", "X-Check: abc", "T:"], ["bad", ": v", "T: \u{7F}"])

    /// `body` in chunks of random sizes, written every legal way (and a few illegal ones).
    mutating func chunked(_ body: [UInt8]) -> [UInt8] {
        var bytes: [UInt8] = []
        var offset = 0
        while offset < body.count {
            let size = min(body.count - offset, 1 + next(20))
            if chance(3) {
                bytes.append(contentsOf: pick(Self.badSizes).utf8)
            } else {
                if chance(10) {
                    bytes.append(contentsOf: repeatElement(UInt8(ascii: "0"), count: next(18 - 2)))
                }
                bytes.append(contentsOf: String(size, radix: 16, uppercase: chance(50)).utf8)
            }
            if chance(15) { bytes.append(contentsOf: pick(Self.extensions).utf8) }
            bytes += [13, 10]
            bytes.append(contentsOf: body[offset..<offset + size])
            bytes += [13, 10]
            offset += size
        }
        bytes += [48, 13, 10]
        for _ in 0..<next(chance(5) ? 12 : 3) {
            bytes.append(contentsOf: pick(Self.trailers).utf8)
            bytes += [13, 10]
        }
        return bytes + [13, 10]
    }

    mutating func mutate(_ bytes: inout [UInt8]) {
        let at = next(bytes.count + 1)
        switch next(5) {
        case 0 where at < bytes.count:
            bytes[at] = UInt8(truncatingIfNeeded: nextRaw())
        case 1:
            bytes.insert(UInt8(truncatingIfNeeded: nextRaw()), at: at)
        case 2 where at < bytes.count:
            bytes.removeSubrange(at..<min(bytes.count, at + 1 + next(4)))
        case 3:
            bytes.insert(contentsOf: pick(Self.tokens), at: at)
        default:
            let length = min(bytes.count - at, next(16))
            bytes.insert(contentsOf: bytes[at..<at + length], at: at)
        }
    }
}
