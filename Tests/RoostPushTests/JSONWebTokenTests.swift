import COpenSSL
import Foundation
import RoostCore
import RoostJSON
import RoostPush
import RoostTestSupport
import Testing

/// Verifies a JWS signature with OpenSSL and the key's public half (PEM).
func verify(_ jwt: String, publicKeyFile: String) throws -> Bool {
    let parts = jwt.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
    try #require(parts.count == 3)
    var signature = try #require(decodeBase64URL(parts[2]))
    let pem = Array(try String(contentsOfFile: publicKeyFile, encoding: .utf8).utf8)
    let key = try #require(
        pem.withUnsafeBytes { buffer in
            let bio = BIO_new_mem_buf(buffer.baseAddress, Int32(buffer.count))
            defer { BIO_free(bio) }
            return PEM_read_bio_PUBKEY(bio, nil, nil, nil)
        })
    defer { EVP_PKEY_free(key) }
    if EVP_PKEY_get_base_id(key) == EVP_PKEY_EC {
        // JWS r||s back to the DER OpenSSL verifies.
        try #require(signature.count == 64)
        let ecdsa = ECDSA_SIG_new()
        defer { ECDSA_SIG_free(ecdsa) }
        ECDSA_SIG_set0(ecdsa, BN_bin2bn(signature, 32, nil), BN_bin2bn(Array(signature[32...]), 32, nil))
        var der: UnsafeMutablePointer<UInt8>?
        let length = i2d_ECDSA_SIG(ecdsa, &der)
        signature = Array(UnsafeBufferPointer(start: der, count: Int(length)))
        CRYPTO_free(der, #file, #line)
    }
    let message = Array((parts[0] + "." + parts[1]).utf8)
    let context = EVP_MD_CTX_new()
    defer { EVP_MD_CTX_free(context) }
    guard EVP_DigestVerifyInit(context, nil, EVP_sha256(), nil, key) == 1 else { return false }
    return EVP_DigestVerify(context, signature, signature.count, message, message.count) == 1
}

func decodeBase64URL(_ text: String) -> [UInt8]? {
    var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
    base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
    return Data(base64Encoded: base64).map { Array($0) }
}

func decodeSegment(_ jwt: String, _ index: Int) -> JSONValue? {
    let segment = jwt.split(separator: ".", omittingEmptySubsequences: false)[index]
    return decodeBase64URL(String(segment)).flatMap { try? JSONParser.parse($0) }
}

struct JSONWebTokenTests {
    @Test func es256SignsWithARawSignatureThePublicKeyVerifies() async throws {
        let folder = TestServer.makeTemporaryDirectory()
        let pair = try await FakePushProvider.makeKey("AuthKey", rsa: false, folder: folder)
        let key = try #require(
            SigningKey(pem: try String(contentsOfFile: pair.privateKey, encoding: .utf8), algorithm: .es256))
        for _ in 0..<20 {
            let claims = JSONObject(uniqueMembers: [
                ("iss", .string(teamID)), ("iat", .integer(1_790_000_000)),
            ])
            let jwt = try #require(
                JSONWebToken.make(header: [("kid", .string(keyID))], claims: claims, key: key))
            #expect(!jwt.contains("=") && !jwt.contains("+") && !jwt.contains("/"))
            #expect(decodeBase64URL(String(jwt.split(separator: ".")[2]))?.count == 64)
            #expect(try verify(jwt, publicKeyFile: pair.publicKey))
            #expect(
                decodeSegment(jwt, 0)
                    == .object(
                        JSONObject(uniqueMembers: [("alg", .string("ES256")), ("kid", .string(keyID))])))
            #expect(decodeSegment(jwt, 1) == .object(claims))
        }
        let other = try await FakePushProvider.makeKey("Other", rsa: false, folder: folder)
        let jwt = try #require(JSONWebToken.make(header: [], claims: JSONObject(), key: key))
        #expect(try !verify(jwt, publicKeyFile: other.publicKey))
    }

    @Test func rs256SignsWhatThePublicKeyVerifies() async throws {
        let folder = TestServer.makeTemporaryDirectory()
        let pair = try await FakePushProvider.makeKey("account", rsa: true, folder: folder)
        let key = try #require(
            SigningKey(pem: try String(contentsOfFile: pair.privateKey, encoding: .utf8), algorithm: .rs256))
        let jwt = try #require(
            JSONWebToken.make(
                header: [("typ", .string("JWT"))],
                claims: JSONObject(uniqueMembers: [("iss", .string("a@b"))]), key: key))
        #expect(try verify(jwt, publicKeyFile: pair.publicKey))
        #expect(decodeBase64URL(String(jwt.split(separator: ".")[2]))?.count == 256)
    }

    @Test func aKeyOfTheWrongKindIsRefused() async throws {
        let folder = TestServer.makeTemporaryDirectory()
        let ec = try String(
            contentsOfFile: try await FakePushProvider.makeKey("ec", rsa: false, folder: folder).privateKey,
            encoding: .utf8)
        let rsa = try String(
            contentsOfFile: try await FakePushProvider.makeKey("rsa", rsa: true, folder: folder).privateKey,
            encoding: .utf8)
        let p384 = try await runProgram(
            "/usr/bin/openssl", ["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-384"])
        #expect(SigningKey(pem: rsa, algorithm: .es256) == nil)
        #expect(SigningKey(pem: ec, algorithm: .rs256) == nil)
        #expect(SigningKey(pem: p384.output, algorithm: .es256) == nil)
        #expect(SigningKey(pem: "not a key", algorithm: .es256) == nil)
    }
}
