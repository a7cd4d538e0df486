import CSodium
import Dispatch
import Foundation

/// libsodium, initialised once before first use.
public enum Sodium {
    private static let ready: Bool = sodium_init() >= 0

    static func ensureReady() {
        precondition(ready, "libsodium could not be initialised")
    }

    /// `count` bytes from the operating system's secure random source.
    static func randomBytes(_ count: Int) -> [UInt8] {
        ensureReady()
        var bytes = [UInt8](repeating: 0, count: count)
        randombytes_buf(&bytes, count)
        return bytes
    }

    static func sha256(_ bytes: [UInt8]) -> [UInt8] {
        ensureReady()
        var digest = [UInt8](repeating: 0, count: Int(crypto_hash_sha256_bytes()))
        crypto_hash_sha256(&digest, bytes, UInt64(bytes.count))
        return digest
    }

    /// A short hex digest (BLAKE2b, 128 bits) of `bytes`, for entity tags of computed answers.
    public static func fingerprint(_ bytes: [UInt8]) -> String {
        ensureReady()
        var digest = [UInt8](repeating: 0, count: 16)
        crypto_generichash(&digest, 16, bytes, UInt64(bytes.count), nil, 0)
        return hex(digest)
    }

    /// Lowercase hex, two digits a byte.
    public static func hex(_ bytes: [UInt8]) -> String {
        bytes.map { byte in (byte < 16 ? "0" : "") + String(byte, radix: 16) }.joined()
    }

    /// A random throwaway password, for the decoy hash.
    public static func randomPassword() -> String { base64URL(randomBytes(24)) }

    /// URL-safe base64 without padding.
    static func base64URL(_ bytes: [UInt8]) -> String {
        var output = [CChar](repeating: 0, count: bytes.count * 4 / 3 + 4)
        let variant = Int32(sodium_base64_VARIANT_URLSAFE_NO_PADDING)
        sodium_bin2base64(&output, output.count, bytes, bytes.count, variant)
        return String(
            decoding: output.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// Argon2id password hashing through libsodium, off the event loops.
///
/// Hashing takes tens of milliseconds and 19 MiB by design, so it runs on ``BackgroundWorkers``
/// at low priority; handlers await it, and the loops keep serving other requests.
public struct PasswordHasher: Sendable {
    /// Passes over memory (OWASP's minimum for Argon2id is 2 with 19 MiB).
    public let operations: UInt64
    /// Bytes of memory per hash.
    public let memory: Int

    /// The production setting: Argon2id, t=2, m=19 MiB.
    public static let standard = PasswordHasher(operations: 2, memory: 19 * 1024 * 1024)

    /// Whether hashing runs on the calling thread instead of the low-priority workers.
    public let runsInline: Bool

    public init(operations: UInt64, memory: Int) {
        self.operations = operations
        self.memory = memory
        runsInline = false
    }

    /// A hasher too cheap to be worth a thread hop: for tests, whose machines are often so busy
    /// that the nice-19 workers would wait seconds for the CPU.
    public static func cheapForTests() -> PasswordHasher {
        PasswordHasher(operations: 1, memory: 64 * 1024, runsInline: true)
    }

    private init(operations: UInt64, memory: Int, runsInline: Bool) {
        self.operations = operations
        self.memory = memory
        self.runsInline = runsInline
    }

    /// The hash of `password` in libsodium's self-describing string format.
    public func hash(_ password: String) async -> String {
        await offload { [self] in hashBlocking(password) }
    }

    /// The hash, computed on the calling thread: only for start-up, never in a handler.
    public func hashBlocking(_ password: String) -> String {
        Sodium.ensureReady()
        var output = [CChar](repeating: 0, count: Int(crypto_pwhash_strbytes()))
        let bytes = Array(password.utf8CString.dropLast())
        let status = crypto_pwhash_str(&output, bytes, UInt64(bytes.count), operations, memory)
        precondition(status == 0, "Argon2id ran out of memory")
        return String(decoding: output.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Whether `password` matches `hash`, in constant time for equal-length inputs.
    public func verify(_ password: String, against hash: String) async -> Bool {
        await offload {
            Sodium.ensureReady()
            let bytes = Array(password.utf8CString.dropLast())
            return crypto_pwhash_str_verify(hash, bytes, UInt64(bytes.count)) == 0
        }
    }

    /// Whether a stored hash was made with other parameters and should be redone at next login.
    public func needsRehash(_ hash: String) -> Bool {
        Sodium.ensureReady()
        return crypto_pwhash_str_needs_rehash(hash, operations, memory) != 0
    }

    private func offload<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
        runsInline ? work() : await BackgroundWorkers.shared.run(work)
    }
}
