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
    public static func base64URL(_ bytes: [UInt8]) -> String {
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
/// at low priority; handlers await it, and the loops keep serving other requests. The workers'
/// queue is bounded: beyond it, and when Argon2id cannot get its memory, hashing throws 503
/// `server_busy` with a `Retry-After` instead of waiting without end or crashing.
public struct PasswordHasher: Sendable {
    /// The Argon2id functions themselves; tests inject ones that fail or wait.
    public struct Primitives: Sendable {
        /// What checking a password against a stored hash found.
        public enum Verification: Sendable, Equatable {
            case match
            case mismatch
            /// The hash's memory could not be allocated: nothing is known about the password.
            case outOfMemory
        }

        /// The encoded hash of a password with these costs, or nil when it cannot be computed
        /// (libsodium fails only when the memory cannot be allocated).
        public var hash: @Sendable (_ password: String, _ operations: UInt64, _ memory: Int) -> String?
        /// Checks a password against an encoded hash.
        public var verify: @Sendable (_ password: String, _ hash: String) -> Verification

        public init(
            hash: @escaping @Sendable (String, UInt64, Int) -> String?,
            verify: @escaping @Sendable (String, String) -> Verification
        ) {
            self.hash = hash
            self.verify = verify
        }

        /// libsodium's `crypto_pwhash_str` and `crypto_pwhash_str_verify`.
        public static let libsodium = Primitives(
            hash: { password, operations, memory in
                Sodium.ensureReady()
                var output = [CChar](repeating: 0, count: Int(crypto_pwhash_strbytes()))
                let bytes = Array(password.utf8CString.dropLast())
                guard crypto_pwhash_str(&output, bytes, UInt64(bytes.count), operations, memory) == 0
                else { return nil }
                return String(
                    decoding: output.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            },
            verify: { password, hash in
                Sodium.ensureReady()
                let bytes = Array(password.utf8CString.dropLast())
                // crypto_pwhash_str_verify answers "mismatch" when its memory cannot be allocated,
                // which would turn memory pressure into wrong-password answers and throttled
                // users; recomputing with crypto_pwhash tells the two apart (errno ENOMEM).
                guard let encoded = EncodedArgon2id(hash) else {
                    return crypto_pwhash_str_verify(hash, bytes, UInt64(bytes.count)) == 0
                        ? .match : .mismatch
                }
                var output = [UInt8](repeating: 0, count: encoded.hash.count)
                errno = 0
                let status = crypto_pwhash(
                    &output, UInt64(output.count), bytes, UInt64(bytes.count), encoded.salt,
                    encoded.operations,
                    encoded.memory, crypto_pwhash_alg_argon2id13())
                guard status == 0 else { return errno == ENOMEM ? .outOfMemory : .mismatch }
                return sodium_memcmp(output, encoded.hash, output.count) == 0 ? .match : .mismatch
            })
    }

    /// Passes over memory (OWASP's minimum for Argon2id is 2 with 19 MiB).
    public let operations: UInt64
    /// Bytes of memory per hash.
    public let memory: Int
    /// Where hashes (and sign-ins' signature checks) run; nil runs them on the calling thread.
    public let workers: BackgroundWorkers?
    let primitives: Primitives

    /// The production setting: Argon2id, t=2, m=19 MiB, on the shared low-priority workers.
    public static let standard = PasswordHasher(operations: 2, memory: 19 * 1024 * 1024)

    /// Seconds a client is told to wait when every hashing slot is taken.
    static let busyRetryAfter = 2
    /// Seconds a client is told to wait when the hash's memory could not be allocated.
    static let outOfMemoryRetryAfter = 5

    /// Whether hashing runs on the calling thread instead of the low-priority workers.
    public var runsInline: Bool { workers == nil }

    /// A hasher with these costs running on `workers` (whose queue limit bounds the hashes waiting).
    public init(
        operations: UInt64, memory: Int, workers: BackgroundWorkers? = .shared,
        primitives: Primitives = .libsodium
    ) {
        self.operations = operations
        self.memory = memory
        self.workers = workers
        self.primitives = primitives
    }

    /// A hasher too cheap to be worth a thread hop: for tests, whose machines are often so busy
    /// that the nice-19 workers would wait seconds for the CPU.
    public static func cheapForTests() -> PasswordHasher {
        PasswordHasher(operations: 1, memory: 64 * 1024, workers: nil)
    }

    /// The hash of `password` in libsodium's self-describing string format; throws 503
    /// `server_busy` when the workers' queue is full or the memory cannot be allocated.
    public func hash(_ password: String) async throws -> String {
        try await offload { [self] in Result { try hashBlocking(password) } }.get()
    }

    /// The hash, computed on the calling thread: only for start-up, never in a handler.
    public func hashBlocking(_ password: String) throws -> String {
        guard let hash = primitives.hash(password, operations, memory) else {
            throw Self.outOfMemory
        }
        return hash
    }

    /// Whether `password` matches `hash`, in constant time for equal-length inputs; throws 503
    /// `server_busy` when the workers' queue is full or the memory cannot be allocated.
    public func verify(_ password: String, against hash: String) async throws -> Bool {
        let verification = try await offload { [primitives] in
            primitives.verify(password, hash)
        }
        switch verification {
        case .match: return true
        case .mismatch: return false
        case .outOfMemory: throw Self.outOfMemory
        }
    }

    /// Whether a stored hash was made with other parameters and should be redone at next login.
    public func needsRehash(_ hash: String) -> Bool {
        Sodium.ensureReady()
        return crypto_pwhash_str_needs_rehash(hash, operations, memory) != 0
    }

    private static var outOfMemory: RoostError {
        .serverBusy(
            retryAfter: outOfMemoryRetryAfter,
            message: "The server is short of memory for checking passwords; try again in a few seconds.")
    }

    private func offload<T: Sendable>(_ work: @escaping @Sendable () -> T) async throws -> T {
        guard let workers else { return work() }
        do {
            return try await workers.runBounded(work)
        } catch is BackgroundWorkers.QueueFull {
            throw RoostError.serverBusy(
                retryAfter: Self.busyRetryAfter,
                message: "The server is busy checking other passwords; try again in a few seconds.")
        }
    }
}

/// The parts of a libsodium Argon2id string, `$argon2id$v=19$m=<KiB>,t=<passes>,p=1$<salt>$<hash>`;
/// nil for any other shape (those are checked by `crypto_pwhash_str_verify` alone).
struct EncodedArgon2id {
    let operations: UInt64
    /// Bytes (the string says KiB).
    let memory: Int
    let salt: [UInt8]
    let hash: [UInt8]

    init?(_ text: String) {
        let parts = text.split(separator: "$", omittingEmptySubsequences: false)
        guard parts.count == 6, parts[0].isEmpty, parts[1] == "argon2id", parts[2] == "v=19" else {
            return nil
        }
        var costs: [Substring: UInt64] = [:]
        for cost in parts[3].split(separator: ",") {
            let pair = cost.split(separator: "=")
            guard pair.count == 2, let value = UInt64(pair[1]) else { return nil }
            costs[pair[0]] = value
        }
        guard costs.count == 3, costs["p"] == 1, let passes = costs["t"], let kibibytes = costs["m"],
            kibibytes <= UInt64(Int.max / 1024),
            let salt = Self.decode(parts[4]), salt.count == Int(crypto_pwhash_saltbytes()),
            let hash = Self.decode(parts[5]), hash.count >= Int(crypto_pwhash_bytes_min())
        else { return nil }
        operations = passes
        memory = Int(kibibytes) * 1024
        self.salt = salt
        self.hash = hash
    }

    /// Standard base64 without padding, as Argon2 strings use.
    private static func decode(_ text: Substring) -> [UInt8]? {
        let characters = Array(String(text).utf8CString.dropLast())
        var bytes = [UInt8](repeating: 0, count: characters.count)
        var length = 0
        let variant = Int32(sodium_base64_VARIANT_ORIGINAL_NO_PADDING)
        guard
            sodium_base642bin(
                &bytes, bytes.count, characters, characters.count, nil, &length, nil, variant) == 0
        else { return nil }
        return Array(bytes.prefix(length))
    }
}
