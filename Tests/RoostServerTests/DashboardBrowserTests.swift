import Foundation
import RoostCore
import RoostServer
import RoostTestSupport
import Testing

/// The admin dashboard (`/_/`) driven in headless Chromium through selenium
/// (Tests/browser/dashboard_flow.py), against the real server on SQLite or PostgreSQL (issue 30).
@Suite("Dashboard in a browser")
struct DashboardBrowserTests {
    @Test func anOperatorBrowsesEditsAndRevokes() async throws {
        let directory = try await makeDataFolder()
        let admin = try await runRoost(
            ["users", "create", "dave", "--admin", "--data-dir", directory], input: "dave-password\n")
        #expect(admin.status == 0, "\(admin.errorOutput)")
        let server = try await TestServer(dataDirectory: directory) { configuration in
            configuration.passwordHasher = PasswordHasher.cheapForTests()
        }
        defer { Task { await server.stop() } }
        let client = server.client
        let bob = try await client.register("bob")
        let bobToken = try #require(bob.json["token"] as? String)
        let bobGuid = try #require((bob.json["user"] as? [String: Any])?["guid"] as? String)
        let carol = try await client.register("carol")
        let carolToken = try #require(carol.json["token"] as? String)
        let carolGuid = try #require((carol.json["user"] as? [String: Any])?["guid"] as? String)
        let token = try await client.login("dave", password: "dave-password")
        let auth = [("X-Token", token)]
        for n in 0..<120 {
            let made = try await client.send(
                "POST", "/ff/resources/Note", json: #"{"n":\#(n)}"#, headers: auth)
            #expect(made.status == 201)
        }
        for body in [
            #"{"guid":"xss","text":"<img src=x onerror=\"window.pwned=1\"><script>window.pwned=1</script>"}"#,
            #"{"guid":"editme","text":"original"}"#, #"{"guid":"gone","text":"delete me"}"#,
            #"{"guid":"picture"}"#,
        ] {
            #expect(
                try await client.send("POST", "/ff/resources/Note", json: body, headers: auth).status == 201)
        }
        // A 1×1 PNG as the picture's blob member.
        let png = try #require(
            Data(
                base64Encoded:
                    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
            ))
        let uploaded = try await client.send(
            "PUT", "/ff/resources/Note/picture/image", headers: auth + [("Content-Type", "image/png")],
            body: Array(png))
        #expect(uploaded.status == 200, "\(uploaded.text)")

        guard
            let out = try await BrowserScript.run(
                "dashboard_flow.py",
                [
                    "--roost", "http://127.0.0.1:\(server.port)", "--admin", "dave", "--password",
                    "dave-password", "--user", bobGuid, "--other", carolGuid, "--user-name", "bob",
                    "--user-password",
                    "correct horse",
                    "--page-port", String(try freeLoopbackPort()),
                ]
                    // ROOST_DASHBOARD_SCREENSHOTS=docs/images refreshes the README's pictures.
                    + (ProcessInfo.processInfo.environment["ROOST_DASHBOARD_SCREENSHOTS"].map {
                        ["--screenshots", $0]
                    } ?? []))
        else { return }
        #expect(out["error"] == nil, "\(out)")
        #expect(out["who"] as? String == "dave")
        #expect(out["tokenInStorage"] as? Bool == true)
        #expect(out["cookies"] as? String == "")
        #expect(out["noteCount"] as? String == "124")
        #expect(out["pageSizes"] as? [Int] == [50, 50, 24])
        #expect(out["distinct"] as? Int == 124)
        #expect(out["lastHasNext"] as? Bool == false)
        #expect(out["imagesOnLastPage"] as? Int == 0)
        #expect(out["previousIsSecond"] as? Bool == true)
        #expect(out["urlAfterPrevious"] as? String == "/_/collections/Note")
        let queryError = try #require(out["queryError"] as? String)
        #expect(queryError.contains("(invalid_query)"), "\(queryError)")
        // The box trims the query: "n gt" ends at column 5, where a value was expected.
        #expect(out["caret"] as? String == "    ^ column 5")
        #expect(out["filtered"] as? Int == 3)
        let xss = try #require(out["xssText"] as? String)
        #expect(xss.contains(#"<img src=x onerror=\"window.pwned=1\"><script>"#), "\(xss)")
        #expect(out["xssImages"] as? Int == 0)
        #expect(out["xssRan"] as? Bool == false)
        #expect(out["metadataGuid"] as? String == "xss")
        #expect((out["afterEdit"] as? String)?.contains(#""text": "edited in the browser""#) == true)
        #expect(out["behindStatus"] as? Int == 200)
        let conflict = try #require(out["conflict"] as? String)
        #expect(
            conflict.hasPrefix("Conflict: this object changed since you opened it (it is now at version 3)"))
        #expect(out["deleteAsks"] as? String == "Delete for good?")
        #expect(out["deletedGone"] as? Bool == true)
        #expect(out["followedReference"] as? String == "editme")
        #expect(out["previewWidth"] as? Int == 1)
        #expect(out["previewSource"] as? String == "blob:")
        #expect(out["deactivateAsks"] as? String == "Deactivate")
        #expect(out["otherStanding"] as? String == "· no email · administrator · deactivated")
        #expect(out["sessionsBefore"] as? Int == 1)
        #expect(out["sessionsAfter"] as? Int == 0)
        #expect(
            out["nonAdmin"] as? String
                == "This account is not an administrator; 'roost users promote' makes one.")
        #expect(out["nonAdminToken"] is NSNull)
        #expect(out["framedForm"] as? Int == 0)

        // What the browser did, as the server has it.
        let edited = try await client.send("GET", "/ff/resources/Note/editme", headers: auth)
        #expect(edited.json["text"] as? String == "changed meanwhile")
        #expect(edited.json["version"] as? Int == 3)
        #expect(try await client.send("GET", "/ff/resources/Note/gone", headers: auth).status == 404)
        let made = try await client.send(
            "GET", "/ff/resources/Note/(text%20eq%20'made%20in%20the%20browser')", headers: auth)
        let items = made.json["items"] as? [[String: Any]] ?? []
        #expect(items.count == 1)
        #expect((items.first?["see"] as? [String: Any])?["ffUrl"] as? String == "/ff/resources/Note/editme")
        let carolNow = try await client.send("GET", "/ff/resources/FFUser/\(carolGuid)", headers: auth)
        #expect(carolNow.json["admin"] as? Bool == true)
        #expect(carolNow.json["active"] as? Bool == false)
        #expect(try await client.send("GET", "/ff/tokens", headers: [("X-Token", carolToken)]).status == 401)
        let revoked = try await client.send("GET", "/ff/tokens", headers: [("X-Token", bobToken)])
        #expect(revoked.status == 401)
        #expect(revoked.json["code"] as? String == "invalid_token")
    }
}
