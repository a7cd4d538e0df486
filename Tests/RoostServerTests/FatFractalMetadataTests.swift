import Foundation
import RoostCore
import RoostServer
import RoostTestSupport
import Testing

/// `GET /ff/metadata` and `POST /ff/metadata` (FatFractal.js's `getFFDL` and `executeFFDL`), and
/// a script's `ff.getAppMetaData()` / `ff.executeFFDL()` (issue 32, item 4).
@Suite("FatFractal metadata and executeFFDL")
struct FatFractalMetadataTests {
    @Test func everyoneSeesCollectionsObjectTypesAndSettingsInTheEnvelope() async throws {
        let server = try await MetadataApp.makeServer()
        defer { Task { await server.stop() } }
        // As gettingstarted's page loads it, before anyone logs in.
        let page = try await server.client.ff("GET", "/ff/metadata")
        #expect(page.status == 200)
        #expect(page.json["statusMessage"] as? String == "Retrieved")
        #expect(jsonEqual(page.json["result"], MetadataApp.publicMetadata), "\(page.text)")
        // Roost's own clients get the metadata bare.
        let plain = try await server.client.send("GET", "/ff/metadata")
        #expect(plain.status == 200)
        #expect(jsonEqual(plain.json, MetadataApp.publicMetadata), "\(plain.text)")
        // A logged-in user who is not an administrator sees no more.
        let alice = try await server.client.fatFractalRegister("alice")
        let asAlice = try await server.client.ff("GET", "/ff/metadata", nil, alice.authHeaders)
        #expect(jsonEqual(asAlice.json["result"], MetadataApp.publicMetadata), "\(asAlice.text)")
    }

    @Test func administratorsAlsoSeeRulesHandlersAndExtensions() async throws {
        let server = try await MetadataApp.makeServer()
        defer { Task { await server.stop() } }
        let answer = try await server.client.ff("GET", "/ff/metadata", nil, [MetadataApp.basic()])
        #expect(answer.status == 200)
        let result = answer.result
        let collections = try #require(result["collectionResources"] as? [[String: Any]])
        let thing = try #require(collections.first { $0["collectionName"] as? String == "/Thing" })
        #expect(
            jsonEqual(
                thing["permissions"],
                ["list": "public", "read": "public", "create": "none", "update": "none", "delete": "none"]))
        let bar = try #require(collections.first { $0["collectionName"] as? String == "/Bar" })
        #expect(
            jsonEqual(
                bar["permissions"],
                [
                    "list": "public", "read": "public", "create": "loggedIn",
                    "update": "createdBy eq @user.guid", "delete": "createdBy eq @user.guid",
                ]))
        #expect(
            jsonEqual(
                result["extensionResources"],
                [
                    [
                        "extensionName": "/changeAsCaller", "secured": true, "runAs": "caller",
                        "script": "scripts/Setup.changeAsCaller",
                    ],
                    [
                        "extensionName": "/cleanup", "secured": false, "runAs": "system",
                        "script": "scripts/Setup.cleanup",
                    ],
                    [
                        "extensionName": "/simpleImport", "secured": false, "runAs": "system",
                        "script": "scripts/Setup.simpleImport",
                    ],
                ]), "\(answer.text)")
        #expect(jsonEqual(result["eventHandlers"], [Any]()))
    }

    @Test func executeFFDLIsForAdministratorsOnly() async throws {
        let server = try await MetadataApp.makeServer()
        defer { Task { await server.stop() } }
        let body = #"{"ffdl":"CREATE COLLECTION /Foos OBJECTTYPE Foo"}"#
        let anonymous = try await server.client.ff("POST", "/ff/metadata", body)
        #expect(anonymous.status == 401)
        #expect(anonymous.json["code"] as? String == "login_required")
        let alice = try await server.client.fatFractalRegister("alice")
        let user = try await server.client.ff("POST", "/ff/metadata", body, alice.authHeaders)
        #expect(user.status == 403)
        #expect(user.json["code"] as? String == "admin_required")
        let wrong = try await server.client.ff(
            "POST", "/ff/metadata", body, [MetadataApp.basic("system", "not the password at all")])
        #expect(wrong.status == 401)
        #expect(wrong.json["code"] as? String == "invalid_credentials")
        let after = try await server.client.send("GET", "/ff/metadata")
        #expect(jsonEqual(after.json, MetadataApp.publicMetadata))
    }

    @Test func executeFFDLChangesCollectionsAndSettingsAtOnce() async throws {
        let server = try await MetadataApp.makeServer()
        defer { Task { await server.stop() } }
        // gettingstarted's "Run FFDL!" and "Update Settings!" buttons, with what Roost carries out.
        let ffdl =
            "CREATE COLLECTION /Foos OBJECTTYPE Foo\r\nSET AllowNewCollections false\r\nSET ETaggingEnabled true\r\nDROP COLLECTION /Bar\r\n"
        let answer = try await server.client.ff(
            "POST", "/ff/metadata",
            #"{"ffdl":\#(String(decoding: try JSONEncoder().encode(ffdl), as: UTF8.self))}"#,
            [MetadataApp.basic()])
        #expect(answer.status == 200, "\(answer.text)")
        #expect(answer.json["statusMessage"] as? String == "Created")
        #expect(
            jsonEqual(
                answer.result["statements"],
                [
                    [
                        "line": 1, "text": "CREATE COLLECTION /Foos OBJECTTYPE Foo", "outcome": "translated",
                        "reason": "collections.Foos",
                    ],
                    [
                        "line": 2, "text": "SET AllowNewCollections false", "outcome": "translated",
                        "reason": "settings.allowNewCollections",
                    ],
                    [
                        "line": 3, "text": "SET ETaggingEnabled true", "outcome": "not needed",
                        "reason": "Roost always sends ETags and answers If-None-Match",
                    ],
                    [
                        "line": 4, "text": "DROP COLLECTION /Bar", "outcome": "translated",
                        "reason": "removes collections.Bar; its objects stay",
                    ],
                ]), "\(answer.text)")
        let after = try await server.client.send("GET", "/ff/metadata")
        let names = (after.json["collectionResources"] as? [[String: Any]])?.compactMap {
            $0["collectionName"] as? String
        }
        #expect(names == ["/FFUser", "/FFUserGroup", "/Foos", "/Thing"])
        #expect((after.json["settings"] as? [String: Any])?["AllowNewCollections"] as? String == "false")
        // In force for writes too: an undeclared collection is now refused.
        let alice = try await server.client.fatFractalRegister("alice")
        let refused = try await server.client.ff("POST", "/ff/resources/Bazs", #"{"a":1}"#, alice.authHeaders)
        #expect(refused.status == 403)
        #expect(refused.json["code"] as? String == "collection_not_allowed")
        let created = try await server.client.ff("POST", "/ff/resources/Foos", #"{"a":1}"#, alice.authHeaders)
        #expect(created.status == 201)
    }

    /// FatFractal.js in the app's own page: an administrator's session (simulated cookies, or the
    /// `sessionId` cookie with `Data-type`), under the app prefix.
    @Test func anAdministratorsFatFractalSessionRunsFFDLUnderTheAppPrefix() async throws {
        let directory = try await makeDataFolder()
        let created = try await runRoost(
            ["users", "create", "dave", "--admin", "--data-dir", directory], input: "dave-password\n")
        #expect(created.status == 0, "\(created.errorOutput)")
        let server = try await MetadataApp.makeServer(dataDirectory: directory) { configuration in
            configuration.appPrefix = "gettingstarted"
        }
        defer { Task { await server.stop() } }
        let login = try FatFractalLogin(
            try await server.client.ff(
                "POST", "/gettingstarted/ff/login",
                #"{"credential":{"userName":"dave","password":"dave-password"}}"#))
        let simulated = try await server.client.ff(
            "POST", "/gettingstarted/ff/metadata", #"{"ffdl":"CREATE COLLECTION /Foos OBJECTTYPE Foo"}"#,
            login.authHeaders)
        #expect(simulated.status == 200, "\(simulated.text)")
        let cookie = try await server.client.ff(
            "POST", "/gettingstarted/ff/metadata", #"{"ffdl":"DROP COLLECTION /Foos"}"#, [login.cookieHeader])
        #expect(cookie.status == 200, "\(cookie.text)")
        // Without Data-type the request is not in the dialect, whose cookie is not read (CSRF).
        let bare = try await server.client.send(
            "POST", "/gettingstarted/ff/metadata", json: #"{"ffdl":"CREATE COLLECTION /Foos"}"#,
            headers: [login.cookieHeader])
        #expect(bare.status == 401)
        #expect(bare.json["code"] as? String == "login_required")
        let page = try await server.client.ff("GET", "/gettingstarted/ff/metadata")
        #expect(jsonEqual(page.json["result"], MetadataApp.publicMetadata), "\(page.text)")
    }

    @Test func whatTheImportDoesNotTranslateRefusesTheWholeChange() async throws {
        let server = try await MetadataApp.makeServer()
        defer { Task { await server.stop() } }
        let ffdl =
            #"CREATE COLLECTION /Foos\nSET CachingEnabled true\nCREATE ALIAS ON OBJECTTYPE FFUser GRABBAG BackReferences.FFUserGroup.users AS memberOfGroups"#
        let answer = try await server.client.ff(
            "POST", "/ff/metadata", #"{"ffdl":"\#(ffdl)"}"#, [MetadataApp.basic()])
        #expect(answer.status == 400)
        #expect(answer.json["code"] as? String == "ffdl_unsupported")
        #expect(
            answer.json["statusMessage"] as? String
                == "Roost does not carry out 2 of these FFDL statements (see details); nothing was changed.")
        #expect(
            jsonEqual(
                (answer.json["details"] as? [String: Any])?["statements"],
                [
                    ["line": 2, "text": "SET CachingEnabled true", "reason": "Roost has no such setting"],
                    [
                        "line": 3,
                        "text":
                            "CREATE ALIAS ON OBJECTTYPE FFUser GRABBAG BackReferences.FFUserGroup.users AS memberOfGroups",
                        "reason": "Roost has no equivalent of CREATE ALIAS",
                    ],
                ]), "\(answer.text)")
        let after = try await server.client.send("GET", "/ff/metadata")
        #expect(jsonEqual(after.json, MetadataApp.publicMetadata))
        // A result that is no valid definition: a handler whose script does not exist.
        let invalid = try await server.client.ff(
            "POST", "/ff/metadata",
            #"{"ffdl":"CREATE HANDLER Gone POST ON /Bar Create AS javascript:require('scripts/Missing').f();"}"#,
            [MetadataApp.basic()])
        #expect(invalid.status == 400)
        #expect(invalid.json["code"] as? String == "ffdl_invalid", "\(invalid.text)")
        let missing = try await server.client.ff(
            "POST", "/ff/metadata", #"{"ffdl":1}"#, [MetadataApp.basic()])
        #expect(missing.status == 400)
        #expect(missing.json["code"] as? String == "invalid_field")
        let large = String(repeating: "# comment\n", count: 7000)
        let tooLarge = try await server.client.ff(
            "POST", "/ff/metadata", #"{"ffdl":"\#(large.replacingOccurrences(of: "\n", with: "\\n"))"}"#,
            [MetadataApp.basic()])
        #expect(tooLarge.status == 413)
        #expect(tooLarge.json["code"] as? String == "body_too_large")
    }

    @Test func gettingStartedsCleanupExtensionDropsWhatTheMetadataLists() async throws {
        let server = try await MetadataApp.makeServer()
        defer { Task { await server.stop() } }
        let answer = try await server.client.ff("GET", "/ff/ext/cleanup")
        #expect(answer.status == 200, "\(answer.text)")
        #expect(answer.json["statusMessage"] as? String == "cleanup ran 4 ffdl commands.")
        #expect(jsonEqual(answer.result, ["ran": 4, "settings": "true"]), "\(answer.text)")
        let after = try await server.client.send("GET", "/ff/metadata")
        let names = (after.json["collectionResources"] as? [[String: Any]])?.compactMap {
            $0["collectionName"] as? String
        }
        #expect(names == ["/FFUser", "/FFUserGroup"])
        // The extensions, not collections, stay.
        let admin = try await server.client.send("GET", "/ff/metadata", headers: [MetadataApp.basic()])
        #expect((admin.json["extensionResources"] as? [Any])?.count == 3)
    }

    @Test func aScriptWithItsCallersRightsChangesNothing() async throws {
        let server = try await MetadataApp.makeServer()
        defer { Task { await server.stop() } }
        let alice = try await server.client.fatFractalRegister("alice")
        let answer = try await server.client.ff("POST", "/ff/ext/changeAsCaller", "{}", alice.authHeaders)
        #expect(answer.status == 200, "\(answer.text)")
        #expect(
            jsonEqual(
                answer.result,
                [
                    "refused": 403, "code": "forbidden",
                    "message":
                        "Only scripts with system rights (\"runAs\": \"system\") or run by an administrator change the app definition.",
                ]), "\(answer.text)")
        // The system user calling it is an administrator: the script may.
        let system = try await server.client.ff("POST", "/ff/ext/changeAsCaller", "{}", [MetadataApp.basic()])
        #expect(system.status == 200, "\(system.text)")
        let names =
            (try await server.client.send("GET", "/ff/metadata").json["collectionResources"]
            as? [[String: Any]])?.compactMap { $0["collectionName"] as? String }
        #expect(names?.contains("/Sneaky") == true)
    }
}
