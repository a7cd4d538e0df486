import Foundation
import RoostCore
import RoostPush
import RoostTestSupport
import Testing

struct PushSendersTests {
    @Test func anUnconfiguredPlatformIsRefused() async throws {
        let senders = PushSenders(apns: nil, fcm: nil)
        #expect(
            await senders.send(PushNotification(body: "x"), to: apnsTarget(deviceToken(1)))
                == .rejected(reason: "apns is not configured"))
        #expect(
            await senders.send(PushNotification(body: "x"), to: fcmTarget("a"))
                == .rejected(reason: "fcm is not configured"))
        await senders.shutdown()
    }

    @Test func badKeyFilesSayWhatToFix() async throws {
        let folder = TestServer.makeTemporaryDirectory()
        let rsa = try await FakePushProvider.makeKey("rsa", rsa: true, folder: folder)
        let ec = try await FakePushProvider.makeKey("ec", rsa: false, folder: folder)
        func failure(_ configuration: PushConfiguration) -> String? {
            do {
                _ = try PushSenders(configuration: configuration)
                return nil
            } catch {
                return error.description
            }
        }
        #expect(
            failure(
                PushConfiguration(
                    apns: APNsConfiguration(keyFile: rsa.privateKey, keyID: keyID, teamID: teamID)))
                == "the APNs key file \(rsa.privateKey) is not a PKCS#8 P-256 key (.p8, \"-----BEGIN PRIVATE KEY-----\")"
        )
        #expect(
            failure(
                PushConfiguration(
                    apns: APNsConfiguration(keyFile: ec.privateKey, keyID: "short", teamID: teamID)))
                == "the APNs key id and team id are 10 characters each (Apple's developer site, Keys and Membership)"
        )
        #expect(
            failure(
                PushConfiguration(
                    apns: APNsConfiguration(keyFile: folder + "/missing.p8", keyID: keyID, teamID: teamID)))?
                .hasPrefix("cannot read the APNs key file \(folder)/missing.p8") == true)
        try Data(#"{"project_id": "p", "client_email": "a@b", "token_uri": "https://x/token"}"#.utf8)
            .write(to: URL(fileURLWithPath: folder + "/account.json"))
        #expect(
            failure(PushConfiguration(fcm: FCMConfiguration(serviceAccountFile: folder + "/account.json")))
                == "the FCM service account file \(folder)/account.json has no \"private_key\"")
        // Nothing secret in the messages: a key's text never appears.
        let pem = try String(contentsOfFile: ec.privateKey, encoding: .utf8)
        try Data(
            #"{"project_id": "p", "client_email": "a@b", "token_uri": "https://x/token", "private_key": "\#(pem.replacingOccurrences(of: "\n", with: "\\n"))"}"#
                .utf8
        )
        .write(to: URL(fileURLWithPath: folder + "/ec-account.json"))
        let message = failure(
            PushConfiguration(fcm: FCMConfiguration(serviceAccountFile: folder + "/ec-account.json")))
        #expect(
            message
                == "the private_key of the FCM service account file \(folder)/ec-account.json is not a PKCS#8 RSA key"
        )
    }
}
