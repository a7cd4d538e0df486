import COpenSSL
import RoostCore
import RoostJSON

/// A private key read from a PEM file (PKCS#8 `-----BEGIN PRIVATE KEY-----`), for signing JWTs.
/// The key is only read after loading (OpenSSL 3 allows concurrent signing with one `EVP_PKEY`),
/// and freed in deinit, hence `@unchecked Sendable`.
public final class SigningKey: @unchecked Sendable {
    public enum Algorithm: String, Sendable {
        /// ECDSA P-256 with SHA-256 (APNs).
        case es256 = "ES256"
        /// RSASSA-PKCS1-v1_5 with SHA-256 (Google service accounts).
        case rs256 = "RS256"
    }

    public let algorithm: Algorithm
    private let key: OpaquePointer

    /// Reads `pem`; nil when it is not a private key of the algorithm's type (P-256 for ES256).
    public init?(pem: String, algorithm: Algorithm) {
        let bytes = Array(pem.utf8)
        let loaded: OpaquePointer? = bytes.withUnsafeBytes { buffer in
            guard let bio = BIO_new_mem_buf(buffer.baseAddress, Int32(buffer.count)) else { return nil }
            defer { BIO_free(bio) }
            // No passphrase callback prompt: an encrypted key fails to load.
            return PEM_read_bio_PrivateKey(bio, nil, { _, _, _, _ in 0 }, nil)
        }
        ERR_clear_error()
        guard let loaded else { return nil }
        let matches: Bool
        switch algorithm {
        case .es256:
            var name = [CChar](repeating: 0, count: 64)
            let named = EVP_PKEY_get_group_name(loaded, &name, name.count, nil) == 1
            matches =
                EVP_PKEY_get_base_id(loaded) == EVP_PKEY_EC && named
                && ["prime256v1", "P-256"].contains(String(cString: name))
        case .rs256:
            matches = EVP_PKEY_get_base_id(loaded) == EVP_PKEY_RSA
        }
        guard matches else {
            EVP_PKEY_free(loaded)
            return nil
        }
        self.algorithm = algorithm
        self.key = loaded
    }

    deinit { EVP_PKEY_free(key) }

    /// The signature of `message` in the JWS form: raw r||s (64 bytes) for ES256, PKCS#1 v1.5
    /// for RS256. Nil only if OpenSSL fails.
    public func sign(_ message: [UInt8]) -> [UInt8]? {
        guard let context = EVP_MD_CTX_new() else { return nil }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestSignInit(context, nil, EVP_sha256(), nil, key) == 1 else { return nil }
        var length = 0
        guard EVP_DigestSign(context, nil, &length, message, message.count) == 1 else { return nil }
        var signature = [UInt8](repeating: 0, count: length)
        guard EVP_DigestSign(context, &signature, &length, message, message.count) == 1 else { return nil }
        signature.removeSubrange(length...)
        return algorithm == .es256 ? Self.rawECDSA(fromDER: signature) : signature
    }

    /// OpenSSL gives ECDSA signatures as DER `SEQUENCE { r, s }`; JWS wants r and s as 32 bytes each.
    private static func rawECDSA(fromDER der: [UInt8]) -> [UInt8]? {
        der.withUnsafeBufferPointer { buffer -> [UInt8]? in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            guard let signature = d2i_ECDSA_SIG(nil, &cursor, buffer.count) else { return nil }
            defer { ECDSA_SIG_free(signature) }
            var r: OpaquePointer?
            var s: OpaquePointer?
            ECDSA_SIG_get0(signature, &r, &s)
            var raw = [UInt8](repeating: 0, count: 64)
            let written = raw.withUnsafeMutableBufferPointer { out in
                BN_bn2binpad(r, out.baseAddress, 32) == 32 && BN_bn2binpad(s, out.baseAddress! + 32, 32) == 32
            }
            return written ? raw : nil
        }
    }
}

/// JSON Web Tokens (RFC 7519) in the compact JWS form, signed with a ``SigningKey``.
public enum JSONWebToken {
    /// `base64url(header).base64url(claims).base64url(signature)`; the header's `alg` is the
    /// key's. Nil only if OpenSSL fails to sign.
    public static func make(header: [(key: String, value: JSONValue)], claims: JSONObject, key: SigningKey)
        -> String?
    {
        let fullHeader = JSONObject(uniqueMembers: [("alg", .string(key.algorithm.rawValue))] + header)
        let signingInput =
            Sodium.base64URL(JSONWriter.bytes(.object(fullHeader))) + "."
            + Sodium.base64URL(JSONWriter.bytes(.object(claims)))
        guard let signature = key.sign(Array(signingInput.utf8)) else { return nil }
        return signingInput + "." + Sodium.base64URL(signature)
    }
}

extension JSONWebToken {
    /// A compact JWS taken apart; nothing in it is checked yet.
    public struct Parts: Sendable {
        public var header: JSONObject
        public var claims: JSONObject
        public var signature: [UInt8]
        /// `base64url(header).base64url(claims)`: what the signature signs.
        public var signingInput: [UInt8]
    }

    /// The parts of `token`; nil unless it is three base64url segments, the first two JSON objects.
    public static func parts(of token: String) -> Parts? {
        let segments = token.split(separator: ".", omittingEmptySubsequences: false)
        guard segments.count == 3, let header = decodeBase64URL(String(segments[0])),
            let claims = decodeBase64URL(String(segments[1])),
            let signature = decodeBase64URL(String(segments[2])),
            case .object(let headerObject)? = try? JSONParser.parse(header),
            case .object(let claimsObject)? = try? JSONParser.parse(claims)
        else { return nil }
        return Parts(
            header: headerObject, claims: claimsObject, signature: signature,
            signingInput: Array(segments[0].utf8) + [UInt8(ascii: ".")] + Array(segments[1].utf8))
    }

    /// Base64url without padding (RFC 4648 section 5), strictly: nil for any other character or a
    /// length no encoding has.
    public static func decodeBase64URL(_ text: String) -> [UInt8]? {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count * 3 / 4)
        var buffer: UInt32 = 0
        var bits = 0
        for character in text.utf8 {
            let value: UInt8
            switch character {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): value = character - UInt8(ascii: "A")
            case UInt8(ascii: "a")...UInt8(ascii: "z"): value = character - UInt8(ascii: "a") + 26
            case UInt8(ascii: "0")...UInt8(ascii: "9"): value = character - UInt8(ascii: "0") + 52
            case UInt8(ascii: "-"): value = 62
            case UInt8(ascii: "_"): value = 63
            default: return nil
            }
            buffer = buffer << 6 | UInt32(value)
            bits += 6
            if bits >= 8 {
                bits -= 8
                bytes.append(UInt8(truncatingIfNeeded: buffer >> UInt32(bits)))
                buffer &= (1 << UInt32(bits)) - 1
            }
        }
        // A lone 6-bit group encodes no byte.
        guard bits < 6 else { return nil }
        return bytes
    }
}
