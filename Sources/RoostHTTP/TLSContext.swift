import COpenSSL
import Glibc
import Synchronization

/// A certificate or key that cannot be used: the message names the file and the problem.
public struct TLSConfigurationError: Error, Sendable, CustomStringConvertible {
    public let message: String
    public var description: String { message }
    public init(message: String) { self.message = message }
}

/// The server's TLS settings and certificate: one OpenSSL context that every loop's connections
/// share, replaced as a whole by ``reload()`` (connections already open keep the context they
/// began with; new ones get the new certificate).
///
/// TLS 1.2 and 1.3 only, Mozilla's "intermediate" cipher list for 1.2 (OpenSSL's defaults for
/// 1.3, which are the same suites), ALPN `http/1.1`, and session resumption by tickets and by a
/// server-side session cache.
public final class TLSContext: Sendable {
    public let certificatePath: String
    public let keyPath: String
    private let current: Mutex<ContextHandle>

    /// Mozilla's "intermediate" configuration (version 5.7) for TLS 1.2.
    static let intermediateCiphers = [
        "ECDHE-ECDSA-AES128-GCM-SHA256", "ECDHE-RSA-AES128-GCM-SHA256", "ECDHE-ECDSA-AES256-GCM-SHA384",
        "ECDHE-RSA-AES256-GCM-SHA384", "ECDHE-ECDSA-CHACHA20-POLY1305", "ECDHE-RSA-CHACHA20-POLY1305",
        "DHE-RSA-AES128-GCM-SHA256", "DHE-RSA-AES256-GCM-SHA384", "DHE-RSA-CHACHA20-POLY1305",
    ].joined(separator: ":")
    static let groups = "X25519:prime256v1:secp384r1"
    static let sessionCacheEntries = 20_000

    /// Loads the certificate chain and key (PEM); throws when either is unreadable, not PEM, or
    /// they do not belong together.
    public init(certificatePath: String, keyPath: String) throws(TLSConfigurationError) {
        self.certificatePath = certificatePath
        self.keyPath = keyPath
        current = Mutex(try Self.makeContext(certificatePath: certificatePath, keyPath: keyPath))
    }

    deinit {
        current.withLock { SSL_CTX_free($0.context) }
    }

    /// Reads the files again; on success new connections use them, on failure nothing changes.
    public func reload() throws(TLSConfigurationError) {
        let fresh = try Self.makeContext(certificatePath: certificatePath, keyPath: keyPath)
        let old = current.withLock { handle in
            defer { handle = fresh }
            return handle
        }
        // Connections still using the old context hold their own references to it.
        SSL_CTX_free(old.context)
    }

    /// A new server-side TLS session for one accepted connection, or nil when OpenSSL is out of
    /// memory.
    func makeSession() -> OpaquePointer? {
        // Under the lock: a reload cannot free the context between reading and using it.
        current.withLock { ContextHandle(context: SSL_new($0.context)) }.context
    }

    private static func makeContext(certificatePath: String, keyPath: String) throws(TLSConfigurationError)
        -> ContextHandle
    {
        guard Self.contains(try firstBytes(certificatePath, role: "certificate"), "-----BEGIN ") else {
            throw TLSConfigurationError(
                message:
                    "the certificate file \(certificatePath) holds no PEM data; it must start with -----BEGIN CERTIFICATE-----"
            )
        }
        let key = try firstBytes(keyPath, role: "key")
        guard Self.contains(key, "-----BEGIN ") else {
            throw TLSConfigurationError(
                message:
                    "the key file \(keyPath) holds no PEM data; it must start with -----BEGIN PRIVATE KEY----- or similar"
            )
        }
        // Said from the header: decrypting without the passphrase fails with a reason that
        // depends on the key (now and then the garbage even passes the padding check).
        if Self.contains(key, "-----BEGIN ENCRYPTED PRIVATE KEY-----")
            || Self.contains(key, "Proc-Type: 4,ENCRYPTED")
        {
            throw TLSConfigurationError(
                message:
                    "the key file \(keyPath) is encrypted; decrypt it first ('openssl pkey -in KEY -out PLAIN') and keep the plain file readable by roost only"
            )
        }
        ERR_clear_error()
        guard let context = SSL_CTX_new(TLS_server_method()) else {
            throw TLSConfigurationError(message: "cannot create a TLS context: \(openSSLReason())")
        }
        var ready = false
        defer { if !ready { SSL_CTX_free(context) } }
        roost_ssl_ctx_refuse_passphrases(context)
        guard roost_ssl_ctx_set_protocols(context, TLS1_2_VERSION, TLS1_3_VERSION) == 1,
            SSL_CTX_set_cipher_list(context, intermediateCiphers) == 1,
            roost_ssl_ctx_set_groups(context, groups) == 1
        else {
            throw TLSConfigurationError(message: "cannot configure TLS: \(openSSLReason())")
        }
        roost_ssl_ctx_set_server_options(context)
        roost_ssl_ctx_select_http11(context)
        roost_ssl_ctx_set_session_cache(context, sessionCacheEntries)
        let sessionContext = Array("roost".utf8)
        SSL_CTX_set_session_id_context(context, sessionContext, UInt32(sessionContext.count))

        guard SSL_CTX_use_certificate_chain_file(context, certificatePath) == 1 else {
            throw TLSConfigurationError(
                message:
                    "the certificate file \(certificatePath) holds no usable certificate chain (\(openSSLReason()))"
            )
        }
        guard SSL_CTX_use_PrivateKey_file(context, keyPath, SSL_FILETYPE_PEM) == 1 else {
            let errors = takeErrors()
            if errors.contains(where: {
                ERR_GET_LIB($0) == ERR_LIB_X509 && ERR_GET_REASON($0) == X509_R_KEY_VALUES_MISMATCH
            }) {
                throw mismatch(certificatePath: certificatePath, keyPath: keyPath)
            }
            throw TLSConfigurationError(
                message:
                    "the key file \(keyPath) holds no usable private key (\(telling(errors))); an encrypted key must be decrypted first ('openssl pkey -in KEY -out PLAIN')"
            )
        }
        guard SSL_CTX_check_private_key(context) == 1 else {
            ERR_clear_error()
            throw mismatch(certificatePath: certificatePath, keyPath: keyPath)
        }
        ready = true
        return ContextHandle(context: context)
    }

    private static func mismatch(certificatePath: String, keyPath: String) -> TLSConfigurationError {
        TLSConfigurationError(
            message: "the key in \(keyPath) does not match the certificate in \(certificatePath)")
    }

    /// The file's first 64 KiB; throws a clear message for a missing or unreadable file, before
    /// OpenSSL's terser ones.
    private static func firstBytes(_ path: String, role: String) throws(TLSConfigurationError) -> ArraySlice<
        UInt8
    > {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw TLSConfigurationError(
                message: "cannot read the \(role) file \(path): \(String(cString: strerror(errno)))")
        }
        defer { close(descriptor) }
        var bytes = [UInt8](repeating: 0, count: 64 * 1024)
        let count = read(descriptor, &bytes, bytes.count)
        guard count >= 0 else {
            throw TLSConfigurationError(
                message: "cannot read the \(role) file \(path): \(String(cString: strerror(errno)))")
        }
        return bytes[..<count]
    }

    private static func contains(_ bytes: ArraySlice<UInt8>, _ text: String) -> Bool {
        let marker = Array(text.utf8)
        guard bytes.count >= marker.count else { return false }
        return (bytes.startIndex...(bytes.endIndex - marker.count)).contains {
            bytes[$0..<$0 + marker.count].elementsEqual(marker)
        }
    }

    /// The reason of the first OpenSSL error queued on this thread (the cause; later ones only
    /// say where it surfaced), and clears the queue.
    static func openSSLReason() -> String { telling(takeErrors()) }

    /// The reason that best says what is wrong: OpenSSL 3's decoders queue "unsupported" and
    /// "PEM lib" around the telling one ("no start line", "bad decrypt").
    static func telling(_ errors: [UInt]) -> String {
        let reasons = errors.map(reason)
        return reasons.first { !["unsupported", "PEM lib", "system lib"].contains($0) } ?? reasons.first
            ?? "unknown error"
    }

    /// Empties this thread's OpenSSL error queue, oldest first.
    static func takeErrors() -> [UInt] {
        var codes: [UInt] = []
        while case let code = ERR_get_error(), code != 0 { codes.append(code) }
        return codes
    }

    /// OpenSSL's short text for an error code ("unsupported protocol", "no start line").
    static func reason(_ code: UInt) -> String {
        guard code != 0 else { return "unknown error" }
        if let text = ERR_reason_error_string(code) { return String(cString: text) }
        return "error \(ERR_GET_REASON(code))"
    }
}

/// An `SSL_CTX` (or `SSL`) pointer passed in and out of the mutex.
// @unchecked Sendable: OpenSSL's contexts are thread-safe once configured, and sessions are
// handed to the one loop that uses them.
struct ContextHandle: @unchecked Sendable {
    let context: OpaquePointer?
}
