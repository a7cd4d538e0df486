import Foundation
import RoostCore
import RoostTestSupport
import Testing

/// Issue 32, item 2: hoodyoodoo's Top Celebrity is a copy of a Celebrity made by a script with
/// `createObjAtUrl`; its photo must come along (it was a 404), sharing the stored bytes.
@Suite("Scripts copy blob members")
struct ScriptBlobCopyTests {
    static let module = #"""
        var ff = require('ffef/FatFractal');

        function promote() {
            var guid = ff.getExtensionRequestData().httpParameters.guid;
            var celebrity = ff.getObjFromUri('/Celebrity/' + guid);
            return ff.createObjAtUrl(celebrity, '/TopCelebrity');
        }

        // An object that names a blob of an object the caller may not read, or none at all.
        function forge() {
            var data = ff.getExtensionRequestData().httpParameters;
            try {
                return ff.createObjAtUrl({clazz: 'TopCelebrity', firstName: 'X',
                    ffRefs: [{name: 'imageData', type: 'FFB', url: '/ff/resources/' + data.source}]}, '/TopCelebrity');
            } catch (e) {
                return {statusCode: e.statusCode, code: e.code, message: e.statusMessage};
            }
        }

        exports.promote = promote;
        exports.forge = forge;
        """#

    static func makeServer(log: LogCapture = LogCapture()) async throws -> TestServer {
        var definition = try AppDefinition.parse(
            Array(
                #"{"collections": {"Celebrity": {"rules": {"read": "createdBy eq @user.guid", "create": "loggedIn", "update": "createdBy eq @user.guid"}}, "TopCelebrity": {"rules": {"read": "public", "create": "loggedIn"}}}}"#
                    .utf8))
        definition.scripts.modules = ["scripts/Top": module]
        definition.scripts.extensions = [
            "Promote": ScriptExtension(
                name: "Promote", entry: ScriptEntry(module: "scripts/Top", function: "promote")),
            "Forge": ScriptExtension(
                name: "Forge", entry: ScriptEntry(module: "scripts/Top", function: "forge")),
            // A system script that trusts what its caller sends: the system may read the source,
            // the caller may not.
            "ForgeAsSystem": ScriptExtension(
                name: "ForgeAsSystem", entry: ScriptEntry(module: "scripts/Top", function: "forge"),
                rights: .system),
            "PromoteAsSystem": ScriptExtension(
                name: "PromoteAsSystem", entry: ScriptEntry(module: "scripts/Top", function: "promote"),
                rights: .system),
        ]
        return try await TestServer { configuration in
            configuration.appDefinition = definition
            configuration.passwordHasher = PasswordHasher.cheapForTests()
            configuration.logSink = { log.append($0) }
        }
    }

    static let photo: [UInt8] =
        [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + (0..<3000).map { UInt8($0 % 251) }

    /// A Celebrity of `token`'s user with a photo; its guid.
    func celebrity(_ server: TestServer, _ token: String) async throws -> String {
        let created = try await server.client.send(
            "POST", "/ff/resources/Celebrity", json: #"{"firstName":"Ada"}"#, headers: [("X-Token", token)])
        let guid = try #require(created.json["guid"] as? String)
        let upload = try await server.client.send(
            "PUT", "/ff/resources/Celebrity/\(guid)/imageData", headers: [("X-Token", token)],
            body: Self.photo)
        #expect(upload.status == 200, "\(upload.text)")
        return guid
    }

    /// `extension` copying the photo of Celebrity `guid` for `token`'s user, who may not read it,
    /// answers exactly as reading the Celebrity does: 404, the same code and message.
    func expectRefusedAsRead(_ server: TestServer, _ extension: String, guid: String, by token: String)
        async throws
    {
        let read = try await server.client.send(
            "GET", "/ff/resources/Celebrity/\(guid)", headers: [("X-Token", token)])
        #expect(read.status == 404)
        let forged = try await server.client.send(
            "POST", "/ff/ext/\(`extension`)?source=Celebrity/\(guid)/imageData", headers: [("X-Token", token)]
        )
        let refusal = try #require(forged.json["result"] as? [String: Any], "\(forged.text)")
        #expect(refusal["statusCode"] as? Int == 404)
        #expect(refusal["code"] as? String == read.json["code"] as? String)
        #expect(refusal["message"] as? String == read.json["message"] as? String)
    }

    @Test(
        "createObjAtUrl of an object with a photo gives the copy the photo, stored once; it outlives the original"
    )
    func copiesThePhoto() async throws {
        let log = LogCapture()
        let server = try await Self.makeServer(log: log)
        let alice = try await server.client.register("alice").json["token"] as! String
        let guid = try await celebrity(server, alice)
        let promoted = try await server.client.send(
            "POST", "/ff/ext/Promote?guid=\(guid)", headers: [("X-Token", alice)])
        #expect(promoted.status == 200, "\(promoted.text) \(log.text)")
        let top = try await server.client.send("GET", "/ff/resources/TopCelebrity/\(guid)")
        #expect(top.status == 200)
        let member = try #require((top.json["imageData"] as? [String: Any])?["blob"] as? [String: Any])
        #expect(member["url"] as? String == "/ff/resources/TopCelebrity/\(guid)/imageData")
        #expect(member["contentType"] as? String == "image/png")
        #expect(member["size"] as? Int == Self.photo.count)
        let bytes = try await server.client.send("GET", "/ff/resources/TopCelebrity/\(guid)/imageData")
        #expect(bytes.status == 200)
        #expect(bytes.body == Self.photo)
        #expect(bytes.header("Content-Type") == "image/png")
        let digest = try #require(member["sha256"] as? String)
        // With files (SQLite's default), one file holds the bytes for both; on PostgreSQL the
        // bytes are rows keyed by the digest, one by construction.
        if TestBackend.isSQLite {
            let stored = try FileManager.default.subpathsOfDirectory(atPath: server.dataDirectory + "/blobs")
            #expect(
                stored.filter { $0.hasSuffix(digest) }.count == 1, "both objects refer to one stored file")
        }
        // The original goes; the copy's photo stays.
        let deleted = try await server.client.send(
            "DELETE", "/ff/resources/Celebrity/\(guid)", headers: [("X-Token", alice)])
        #expect(deleted.status == 204)
        #expect(
            try await server.client.send("GET", "/ff/resources/TopCelebrity/\(guid)/imageData").body
                == Self.photo)
        await server.stop()
    }

    @Test(
        "a blob of an object the caller may not read, or that is no blob, is refused as a read would be; nothing is made"
    )
    func refusesWhatTheCallerCannotRead() async throws {
        let server = try await Self.makeServer()
        let alice = try await server.client.register("alice").json["token"] as! String
        let mallory = try await server.client.register("mallory").json["token"] as! String
        let guid = try await celebrity(server, alice)
        // Mallory may not read alice's Celebrity: the same 404 as reading it.
        try await expectRefusedAsRead(server, "Forge", guid: guid, by: mallory)
        // Alice may read it, but firstName is no blob.
        let notABlob = try await server.client.send(
            "POST", "/ff/ext/Forge?source=Celebrity/\(guid)/firstName", headers: [("X-Token", alice)])
        let missing = try #require(notABlob.json["result"] as? [String: Any], "\(notABlob.text)")
        #expect(missing["statusCode"] as? Int == 404)
        #expect(
            missing["message"] as? String
                == "Object '\(guid)' in 'Celebrity' has no blob 'firstName'; PUT the bytes there first.")
        let tops = try await server.client.send("GET", "/ff/resources/TopCelebrity?total=true")
        #expect(tops.json["total"] as? Int == 0)
        await server.stop()
    }

    @Test(
        "a system script copies only blobs its caller may read too: a caller cannot launder a blob through it"
    )
    func systemScriptsCopyOnlyWhatTheCallerMayRead() async throws {
        let server = try await Self.makeServer()
        let alice = try await server.client.register("alice").json["token"] as! String
        let mallory = try await server.client.register("mallory").json["token"] as! String
        let guid = try await celebrity(server, alice)
        try await expectRefusedAsRead(server, "ForgeAsSystem", guid: guid, by: mallory)
        #expect(
            try await server.client.send("GET", "/ff/resources/TopCelebrity?total=true").json["total"] as? Int
                == 0)
        // The caller may read it: the system script copies it.
        let promoted = try await server.client.send(
            "POST", "/ff/ext/PromoteAsSystem?guid=\(guid)", headers: [("X-Token", alice)])
        #expect(promoted.status == 200, "\(promoted.text)")
        #expect(
            try await server.client.send("GET", "/ff/resources/TopCelebrity/\(guid)/imageData").body
                == Self.photo)
        await server.stop()
    }
}
