import Foundation
import RoostCore
import RoostServer
import RoostTestSupport
import Testing

/// A FatFractal web app (seed 001's WouldYa flow, written against a client in the style of
/// FatFractal.js) served by Roost and run end to end in headless Chromium (issue 18).
@Suite("FatFractal in a browser") struct FatFractalBrowserTests {
    @Test func wouldYaRunsInHeadlessChromium() async throws {
        // The page and its client sit side by side as the app's web folder.
        let site = TestServer.makeTemporaryDirectory()
        try FileManager.default.createDirectory(atPath: site + "/Scripts", withIntermediateDirectories: true)
        let fixtures = BrowserScript.path("Tests/browser/fatfractal")
        try FileManager.default.copyItem(atPath: fixtures + "/index.html", toPath: site + "/index.html")
        try FileManager.default.copyItem(
            atPath: fixtures + "/ffclient.js", toPath: site + "/Scripts/ffclient.js")
        let server = try await TestServer { configuration in
            configuration.passwordHasher = PasswordHasher.cheapForTests()
            configuration.publicDirectory = site
            configuration.appPrefix = "hoodyoodoo"
        }
        defer { Task { await server.stop() } }

        guard
            let out = try await BrowserScript.run(
                "fatfractal_flow.py", ["--page", "http://127.0.0.1:\(server.port)/hoodyoodoo/index.html"])
        else { return }
        #expect(out["error"] == nil, "\(out)")
        let register = try #require(out["register"] as? [String: Any], "\(out)")
        #expect(register["clazz"] as? String == "FFUser")
        #expect(register["cookie"] as? Bool == true)
        #expect(register["userGuidCookie"] as? Bool == true)
        #expect(out["loggedInWithCookies"] as? Bool == true)
        let create = try #require(out["create"] as? [String: Any])
        #expect(create["clazz"] as? String == "Celebrity")
        #expect(create["version"] as? Int == 2)
        #expect(create["ffUserCanEdit"] as? Bool == true)
        #expect(create["imageStatus"] as? Int == 200)
        #expect(create["imageBytes"] as? [Int] == [137, 80, 78, 71, 1, 2, 3, 4])
        let blobRefs = try #require(create["refs"] as? [[String: String]])
        #expect(blobRefs.first?["type"] == "FFB")
        #expect(blobRefs.first?["name"] == "imageData")
        let refs = try #require((out["reference"] as? [String: Any])?["refs"] as? [[String: String]])
        #expect(refs.map { $0["name"] } == ["selectedCelebrity", "rejectedCelebrity"])
        #expect(refs.allSatisfy { $0["type"] == "FFO" })
        #expect(out["randomPick"] as? [String] == ["Brad"])
        #expect(out["emptyQuery"] as? Int == 0)
        let update = try #require(out["update"] as? [String: Any])
        #expect(update["firstName"] as? String == "Brad Pitt")
        #expect(update["version"] as? Int == 4)
        let read = try #require(out["readWithReferences"] as? [String: Any])
        #expect(read["selected"] as? String == "Brad Pitt")
        #expect(read["rejected"] as? String == "Angelina")
        #expect(out["delete"] as? String == "Deleted")
        let deletedRead = try #require(out["deletedRead"] as? [String: Any])
        #expect(deletedRead["status"] as? Int == 404)
        let wrong = try #require(out["wrongPassword"] as? [String: Any])
        #expect(wrong["status"] as? Int == 401)
        #expect(wrong["statusMessage"] as? String == RoostError.invalidCredentials.message)
        #expect(out["loggedInWithSimulatedCookies"] as? Bool == true)
        #expect((out["simulatedCreate"] as? [String: Any])?["ffUserCanEdit"] as? Bool == true)
        #expect(out["logout"] as? String == "Logged out")
        let after = try #require(out["afterLogout"] as? [String: Any])
        #expect(after["loggedIn"] as? Bool == false)
        #expect(after["cookie"] as? Bool == false)
        #expect(out["replayLoggedIn"] as? Bool == true)
        let revoked = try #require(out["revoked"] as? [String: Any])
        #expect(revoked["status"] as? Int == 401)
        #expect(revoked["statusMessage"] is String)
        #expect(out["forgotten"] as? Bool == true)
    }
}
