import Foundation

/// Where time comes from, so tests can set it.
public protocol WallClock: Sendable {
    /// Milliseconds since 1970.
    func nowMilliseconds() -> Int64
}

/// The system's wall clock.
public struct SystemWallClock: WallClock {
    public init() {}
    public func nowMilliseconds() -> Int64 { Int64((Date().timeIntervalSince1970 * 1000).rounded()) }
}

/// Makes object guids: 128 random bits as 26 lowercase base32 characters.
public protocol GuidGenerator: Sendable {
    func makeGuid() -> String
}

/// Guids from the system's cryptographic random source.
public struct RandomGuidGenerator: GuidGenerator {
    public init() {}

    public func makeGuid() -> String {
        var generator = SystemRandomNumberGenerator()
        let alphabet = Array("abcdefghijklmnopqrstuvwxyz234567".utf8)
        var high = generator.next() as UInt64
        var low = generator.next() as UInt64
        var characters: [UInt8] = []
        characters.reserveCapacity(26)
        for _ in 0..<26 {
            characters.append(alphabet[Int(low & 31)])
            low = (low >> 5) | ((high & 31) << 59)
            high >>= 5
        }
        return String(decoding: characters, as: UTF8.self)
    }
}
