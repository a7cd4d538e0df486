import Foundation
import RoostCore
import RoostJSON
import RoostPush
import RoostTestSupport
import Testing

func fcmTarget(_ token: String) -> PushTarget {
    PushTarget(platform: .fcm, token: token, environment: nil, bundleID: "org.roost.tests")
}

@Suite(.enabled(if: fakesAvailable, "needs Python's h2 (scripts/install-deps.sh --browser-tests)"))
struct FCMSenderTests {
    @Test func oneAccessTokenServesManySendsUntilNearItsExpiry() async throws {
        try await FCMFixture.run { fixture in
            let outcomes = await sendConcurrently(fixture.sender, 20) { fcmTarget("device-\($0)") }
            #expect(outcomes.allSatisfy { $0.isDelivered }, "\(outcomes)")
            #expect(fixture.fake.events("token").count == 1)
            #expect(fixture.sender.accessTokensRequested == 1)
            // The fake's tokens live 3600 s; the sender refreshes 5 minutes before.
            fixture.clock.advance(seconds: 3600 - 300 - 1)
            #expect(await fixture.sender.send(PushNotification(body: "x"), to: fcmTarget("a")).isDelivered)
            #expect(fixture.sender.accessTokensRequested == 1)
            fixture.clock.advance(seconds: 2)
            #expect(await fixture.sender.send(PushNotification(body: "x"), to: fcmTarget("a")).isDelivered)
            #expect(fixture.fake.events("token").count == 2)
            let sends = fixture.fake.events("send")
            #expect(sends.count == 22)
            #expect(sends.last?["access_token"] as? String == "fake-access-token-2")
        }
    }

    @Test func sendsTheMessageShapeOfHTTPv1() async throws {
        try await FCMFixture.run { fixture in
            let notification = PushNotification(
                title: "Would ya?", body: "Tap", badge: 2,
                data: .object(
                    JSONObject(uniqueMembers: [("question", .string("q1")), ("count", .integer(3))])),
                collapseID: "q1", priority: .normal)
            let outcome = await fixture.sender.send(notification, to: fcmTarget("device-1"))
            guard case .delivered(let name?) = outcome else {
                Issue.record("answered \(outcome)")
                return
            }
            #expect(name.hasPrefix("projects/roost-test/messages/"))
            let message = try #require(fixture.fake.events("send").first?["message"] as? NSDictionary)
            let expected: NSDictionary = [
                "token": "device-1", "notification": ["title": "Would ya?", "body": "Tap"],
                "data": ["question": "q1", "count": "3"],
                "android": ["priority": "NORMAL", "collapse_key": "q1"],
                "apns": [
                    "headers": ["apns-priority": "5", "apns-collapse-id": "q1"],
                    "payload": ["aps": ["badge": 2]],
                ],
            ]
            #expect(message == expected)
        }
    }

    @Test func eachAnswerMapsToItsOutcome() async throws {
        let script = """
            {"tokens": {
              "gone": {"status": 404, "errorCode": "UNREGISTERED"},
              "gone-too": {"status": 400, "errorCode": "UNREGISTERED"},
              "busy": {"status": 429, "errorCode": "QUOTA_EXCEEDED", "retry_after": 3},
              "down": {"status": 503},
              "bad": {"status": 400, "errorCode": "INVALID_ARGUMENT"},
              "other-app": {"status": 403, "errorCode": "SENDER_ID_MISMATCH"}
            }}
            """
        try await FCMFixture.run(script: script) { fixture in
            let expected: [(String, PushOutcome)] = [
                ("gone", .invalidToken(reason: "UNREGISTERED")),
                ("gone-too", .invalidToken(reason: "UNREGISTERED")),
                ("busy", .retry(after: .seconds(3), reason: "FCM 429 QUOTA_EXCEEDED")),
                ("down", .retry(after: nil, reason: "FCM 503 UNAVAILABLE")),
                ("bad", .rejected(reason: "FCM 400 INVALID_ARGUMENT: scripted answer")),
                ("other-app", .rejected(reason: "FCM 403 SENDER_ID_MISMATCH: scripted answer")),
            ]
            for (token, outcome) in expected {
                #expect(
                    await fixture.sender.send(PushNotification(body: "x"), to: fcmTarget(token)) == outcome)
            }
        }
    }

    @Test func aRefusedAccessTokenIsRefreshedOnce() async throws {
        try await FCMFixture.run(script: #"{"unauthenticated_first_token": true}"#) { fixture in
            #expect(await fixture.sender.send(PushNotification(body: "x"), to: fcmTarget("a")).isDelivered)
            #expect(fixture.fake.events("send").map { $0["status"] as? Int } == [401, 200])
            #expect(fixture.sender.accessTokensRequested == 2)
        }
    }
}
