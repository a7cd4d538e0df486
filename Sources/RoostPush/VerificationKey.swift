import COpenSSL

/// A public key from a JWK (RFC 7517: RSA `n`/`e`, or EC P-256 `x`/`y`), for checking JWT
/// signatures. Only read after loading, and freed in deinit, hence `@unchecked Sendable`.
public final class VerificationKey: @unchecked Sendable {
    public let algorithm: SigningKey.Algorithm
    private let key: OpaquePointer

    /// RSA moduli accepted, in bytes: 2048 to 4096 bits, so a key set cannot make checks costly.
    static let rsaModulusBytes = 256...512

    /// The key a JWK describes; nil for other types, curves or sizes, or a `use`/`alg` that is
    /// not for signing with the key's algorithm.
    public init?(jwk: [String: String]) {
        if let use = jwk["use"], use != "sig" { return nil }
        let der: [UInt8]
        switch jwk["kty"] {
        case "RSA":
            guard let n = jwk["n"].flatMap(JSONWebToken.decodeBase64URL),
                let e = jwk["e"].flatMap(JSONWebToken.decodeBase64URL),
                Self.rsaModulusBytes.contains(Self.stripped(n).count), (1...8).contains(e.count)
            else { return nil }
            algorithm = .rs256
            // SubjectPublicKeyInfo { rsaEncryption, NULL } BIT STRING { RSAPublicKey { n, e } }
            let identifier = DER.sequence([
                0x06, 0x09, 0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x01, 0x01, 0x05, 0x00,
            ])
            der = DER.sequence(identifier + DER.bitString(DER.sequence(DER.integer(n) + DER.integer(e))))
        case "EC":
            guard jwk["crv"] == "P-256", let x = jwk["x"].flatMap(JSONWebToken.decodeBase64URL),
                let y = jwk["y"].flatMap(JSONWebToken.decodeBase64URL), x.count == 32, y.count == 32
            else { return nil }
            algorithm = .es256
            // SubjectPublicKeyInfo { ecPublicKey, prime256v1 } BIT STRING { 04 x y }
            let identifier = DER.sequence(
                [0x06, 0x07, 0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x02, 0x01]
                    + [0x06, 0x08, 0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x03, 0x01, 0x07])
            der = DER.sequence(identifier + DER.bitString([0x04] + x + y))
        default:
            return nil
        }
        if let alg = jwk["alg"], alg != algorithm.rawValue { return nil }
        let loaded: OpaquePointer? = der.withUnsafeBufferPointer { buffer in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            return d2i_PUBKEY(nil, &cursor, buffer.count)
        }
        ERR_clear_error()
        guard let loaded else { return nil }
        key = loaded
    }

    deinit { EVP_PKEY_free(key) }

    /// Whether `signature` (JWS form: PKCS#1 v1.5 for RS256, r||s for ES256) signs `message`.
    public func verifies(_ signature: [UInt8], of message: [UInt8]) -> Bool {
        var signature = signature
        if algorithm == .es256 {
            guard signature.count == 64 else { return false }
            signature = DER.sequence(
                DER.integer(Array(signature[..<32])) + DER.integer(Array(signature[32...])))
        }
        guard let context = EVP_MD_CTX_new() else { return false }
        defer {
            EVP_MD_CTX_free(context)
            ERR_clear_error()
        }
        guard EVP_DigestVerifyInit(context, nil, EVP_sha256(), nil, key) == 1 else { return false }
        return EVP_DigestVerify(context, signature, signature.count, message, message.count) == 1
    }

    static func stripped(_ bytes: [UInt8]) -> ArraySlice<UInt8> { bytes.drop { $0 == 0 } }
}

/// The few DER encodings a public key and an ECDSA signature need.
enum DER {
    static func length(_ count: Int) -> [UInt8] {
        if count < 0x80 { return [UInt8(count)] }
        var bytes: [UInt8] = []
        var rest = count
        while rest > 0 {
            bytes.insert(UInt8(rest & 0xFF), at: 0)
            rest >>= 8
        }
        return [0x80 | UInt8(bytes.count)] + bytes
    }

    static func sequence(_ content: [UInt8]) -> [UInt8] { [0x30] + length(content.count) + content }

    static func bitString(_ content: [UInt8]) -> [UInt8] {
        [0x03] + length(content.count + 1) + [0x00] + content
    }

    /// An unsigned big-endian integer: no leading zeros, one added when the top bit is set.
    static func integer(_ bytes: [UInt8]) -> [UInt8] {
        var value = Array(VerificationKey.stripped(bytes))
        if value.isEmpty || value[0] & 0x80 != 0 { value.insert(0, at: 0) }
        return [0x02] + length(value.count) + value
    }
}
