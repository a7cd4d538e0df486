import Foundation
import RoostCore
import RoostJSON
import RoostPush
import RoostTestSupport
import Testing

@Suite("ID-token keys: JWKs, base64url and signatures")
struct VerificationKeyTests {
    @Test("base64url is read strictly: no padding, no other alphabet, no impossible length")
    func base64URL() {
        #expect(JSONWebToken.decodeBase64URL("") == [])
        #expect(JSONWebToken.decodeBase64URL("QQ") == [65])
        #expect(JSONWebToken.decodeBase64URL("QUI") == [65, 66])
        #expect(JSONWebToken.decodeBase64URL("-_8") == [0xFB, 0xFF])
        for bad in ["Q", "QQ==", "+/8", "QU I", "QUJDR"] {
            #expect(JSONWebToken.decodeBase64URL(bad) == nil, "\(bad)")
        }
        #expect(JSONWebToken.parts(of: "e30.e30") == nil)
        #expect(JSONWebToken.parts(of: "e30.W10.") == nil, "claims must be an object")
        #expect(JSONWebToken.parts(of: "e30.e30.")?.signature == [])
    }

    @Test("a JWK of another type, curve, size or use is no key")
    func refusedKeys() {
        let small = Sodium.base64URL([0x80] + [UInt8](repeating: 1, count: 127))
        #expect(VerificationKey(jwk: ["kty": "RSA", "n": small, "e": "AQAB"]) == nil, "1024-bit RSA")
        let huge = Sodium.base64URL([0x80] + [UInt8](repeating: 1, count: 512))
        #expect(VerificationKey(jwk: ["kty": "RSA", "n": huge, "e": "AQAB"]) == nil, "4104-bit RSA")
        let coordinate = Sodium.base64URL([UInt8](repeating: 7, count: 32))
        #expect(VerificationKey(jwk: ["kty": "EC", "crv": "P-384", "x": coordinate, "y": coordinate]) == nil)
        #expect(VerificationKey(jwk: ["kty": "oct", "k": coordinate]) == nil)
        // Not a point of the curve.
        #expect(VerificationKey(jwk: ["kty": "EC", "crv": "P-256", "x": coordinate, "y": coordinate]) == nil)
    }

    @Test("RS256 and ES256 tokens verify under the JWK of their key's public half; a changed byte does not")
    func roundTrip() async throws {
        let folder = TestServer.makeTemporaryDirectory()
        for rsa in [true, false] {
            let files = try await FakePushProvider.makeKey(rsa ? "rsa" : "ec", rsa: rsa, folder: folder)
            let der = folder + "/public-\(rsa).der"
            let exported = try await runProgram(
                "/usr/bin/openssl",
                ["pkey", "-in", files.privateKey, "-pubout", "-outform", "DER", "-out", der])
            #expect(exported.status == 0)
            let publicKey = [UInt8](try Data(contentsOf: URL(fileURLWithPath: der)))
            var jwk: [String: String]
            if rsa {
                let modulus = try await runProgram(
                    "/usr/bin/openssl", ["rsa", "-in", files.privateKey, "-noout", "-modulus"])
                let hex = Array(
                    modulus.output.split(separator: "=")[1].trimmingCharacters(in: .whitespacesAndNewlines))
                let bytes = stride(from: 0, to: hex.count, by: 2).map {
                    UInt8(String(hex[$0..<$0 + 2]), radix: 16)!
                }
                jwk = ["kty": "RSA", "n": Sodium.base64URL(bytes), "e": "AQAB", "alg": "RS256", "use": "sig"]
            } else {
                let point = Array(publicKey.suffix(64))
                jwk = [
                    "kty": "EC", "crv": "P-256", "x": Sodium.base64URL(Array(point[..<32])),
                    "y": Sodium.base64URL(Array(point[32...])),
                ]
            }
            let signing = try #require(
                SigningKey(
                    pem: try String(contentsOfFile: files.privateKey, encoding: .utf8),
                    algorithm: rsa ? .rs256 : .es256))
            let token = try #require(
                JSONWebToken.make(
                    header: [("kid", .string("k"))],
                    claims: JSONObject(uniqueMembers: [("sub", .string("someone"))]), key: signing))
            let parts = try #require(JSONWebToken.parts(of: token))
            let key = try #require(VerificationKey(jwk: jwk))
            #expect(key.algorithm == (rsa ? .rs256 : .es256))
            #expect(key.verifies(parts.signature, of: parts.signingInput))
            var changed = parts.signingInput
            changed[changed.count - 1] ^= 1
            #expect(!key.verifies(parts.signature, of: changed))
            #expect(!key.verifies(Array(parts.signature.dropLast()), of: parts.signingInput))
            // The JWK's own alg must be the key's.
            jwk["alg"] = rsa ? "ES256" : "RS256"
            #expect(VerificationKey(jwk: jwk) == nil)
        }
    }
}
