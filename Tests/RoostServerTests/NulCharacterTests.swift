import Foundation
import RoostCore
import RoostTestSupport
import Testing

/// U+0000 in what a client sends. SQLite stores it; PostgreSQL's text cannot hold it, and a value
/// with one used to reach PostgreSQL as a 500 (schemathesis found two, 2026-12-04). Each answer is
/// the same on both backends: what the value would mean if it were stored, or a clear 400.
@Suite("U+0000 in requests")
struct NulCharacterTests {
    @Test("a login naming an account with U+0000 is an unknown account: 401, on both backends")
    func loginWithNul() async throws {
        let world = try await PushWorld.make()
        _ = try await world.user("alice")
        for body in [
            #"{"userName":"ali\u0000ce","password":"correct horse"}"#,
            #"{"userName":"alice@example.com\u0000","password":"correct horse"}"#,
        ] {
            for path in ["/ff/login", "/ff/tokens"] {
                let refused = try await world.client.send("POST", path, json: body)
                #expect(refused.status == 401, "\(path) \(body): \(refused.text)")
                #expect(refused.json["code"] as? String == "invalid_credentials")
            }
        }
        await world.server.stop()
    }

    @Test("a device id with U+0000 is refused with 400 invalid_field and no session is made")
    func deviceIdWithNul() async throws {
        let world = try await PushWorld.make()
        let alice = try await world.user("alice")
        for field in ["deviceId", "deviceType", "manufacturerId"] {
            let refused = try await world.client.send(
                "POST", "/ff/login",
                json: #"{"userName":"alice","password":"correct horse","\#(field)":"ph\u0000one"}"#)
            #expect(refused.status == 400, "\(field): \(refused.text)")
            #expect(refused.json["code"] as? String == "invalid_field")
        }
        let sessions = try await world.client.send(
            "GET", "/ff/admin/sessions?user=\(alice)", headers: [("X-Token", world.admin)])
        #expect((sessions.json["items"] as? [Any])?.count == 1)
        await world.server.stop()
    }

    @Test("a user guid with U+0000 in a push-device path names nobody: 404, on both backends")
    func pushUserWithNul() async throws {
        let world = try await PushWorld.make()
        let refused = try await world.client.send(
            "DELETE", "/ff/push/devices/default?user=a%00b", headers: [("X-Token", world.admin)])
        #expect(refused.status == 404, "\(refused.text)")
        #expect(refused.json["code"] as? String == "device_not_found")
        let listed = try await world.client.send(
            "GET", "/ff/push/devices?user=a%00b", headers: [("X-Token", world.admin)])
        #expect(listed.status == 200, "\(listed.text)")
        #expect((listed.json["items"] as? [Any])?.count == 0)
        await world.server.stop()
    }

    @Test("anywhere else, U+0000 that reaches PostgreSQL is a 400 invalid_text, not a 500")
    func theDriversSafetyNet() async throws {
        let world = try await PushWorld.make()
        // A forged cursor: SQLite compares it and finds nothing after it; PostgreSQL cannot.
        let listed = try await world.client.send(
            "GET", "/ff/push/devices?after=a%00/b", headers: [("X-Token", world.admin)])
        if TestBackend.isSQLite {
            #expect(listed.status == 200, "\(listed.text)")
        } else {
            #expect(listed.status == 400, "\(listed.text)")
            #expect(listed.json["code"] as? String == "invalid_text")
            #expect(
                listed.json["message"] as? String
                    == "A value in the request holds the character U+0000, which cannot be stored or looked up; remove it."
            )
        }
        await world.server.stop()
    }
}
