import Foundation
import RoostCore
import RoostServer
import RoostTestSupport
import Testing

/// FatFractal's envelope, lenient creates and updates, `ffRefs` and blobs (issue 18).
@Suite("FatFractal objects") struct FatFractalObjectTests {
    /// A logged-in FatFractal client's headers (simulated cookies).
    func session(_ server: TestServer, _ name: String = "anna") async throws -> FatFractalLogin {
        try await server.client.fatFractalRegister(name)
    }

    /// A Celebrity of `login`'s with `bytes` PUT to its imageData member as FatFractal.js sends
    /// them: the object's URL and guid, and the PUT's answer.
    func celebrityWithImage(_ server: TestServer, _ login: FatFractalLogin, _ bytes: [UInt8]) async throws
        -> (url: String, guid: String, put: TestResponse)
    {
        let created = try await server.client.ff(
            "POST", "/ff/resources/Celebrity", #"{"clazz":"Celebrity","firstName":"Brad"}"#, login.authHeaders
        )
        let url = try #require(created.result["ffUrl"] as? String)
        let guid = try #require(created.result["guid"] as? String)
        let put = try await server.client.send(
            "PUT", url + "/imageData",
            headers: [("Data-type", "application/octet-stream"), ("Content-type", "image/png")]
                + login.authHeaders,
            body: bytes)
        return (url, guid, put)
    }

    @Test func createAcceptsClazzNullGuidAndTemporaryFfUrl() async throws {
        let server = try await makeFatFractalServer()
        let anna = try await session(server)
        let created = try await server.client.ff(
            "POST", "/ff/resources/Celebrity",
            #"{"clazz":"Celebrity","guid":null,"ffUrl":"1000000","firstName":"Brad","gender":"male"}"#,
            anna.authHeaders)
        #expect(created.status == 201)
        let at = try #require(created.result["createdAt"] as? Int)
        #expect(
            created.text
                == #"{"statusMessage":"Created","result":{"guid":"g0003","ffUrl":"/ff/resources/Celebrity/g0003","createdBy":"\#(anna.userGuid)","createdAt":\#(at),"updatedBy":"\#(anna.userGuid)","updatedAt":\#(at),"version":1,"clazz":"Celebrity","firstName":"Brad","gender":"male","ffRL":"/Celebrity","ffRefs":[],"ffUserCanEdit":true}}"#
        )
        #expect(created.header("Location") == "/ff/resources/Celebrity/g0003")
    }

    /// The same create without the dialect is refused exactly as before.
    @Test func nativeCreateStillRefusesNullGuidAndFfUrl() async throws {
        let server = try await makeFatFractalServer(
            definition: #"{"collections":{"*":{"rules":{"create":"public"}}}}"#)
        let nullGuid = try await server.client.send(
            "POST", "/ff/resources/Celebrity", json: #"{"guid":null,"name":"Brad"}"#)
        #expect(nullGuid.status == 400)
        #expect(nullGuid.json["code"] as? String == "invalid_guid")
        let ffUrl = try await server.client.send(
            "POST", "/ff/resources/Celebrity", json: #"{"ffUrl":"1000000","name":"Brad"}"#)
        #expect(ffUrl.json["code"] as? String == "read_only_field")
        let created = try await server.client.send(
            "POST", "/ff/resources/Celebrity", json: #"{"name":"Brad"}"#)
        #expect(created.status == 201)
        #expect(created.json["statusMessage"] == nil)
        #expect(created.json["ffRefs"] == nil)
        let list = try await server.client.send("GET", "/ff/resources/Celebrity")
        #expect((list.json["items"] as? [Any])?.count == 1)
    }

    @Test func listsAreArraysAndNoMatchIsAnEmptyArray() async throws {
        let server = try await makeFatFractalServer()
        let anna = try await session(server)
        _ = try await server.client.ff(
            "POST", "/ff/resources/Celebrity", #"{"gender":"male"}"#, anna.authHeaders)
        let list = try await server.client.ff("GET", "/ff/resources/Celebrity")
        #expect(list.status == 200)
        #expect((list.json["result"] as? [[String: Any]])?.first?["gender"] as? String == "male")
        #expect(list.json["statusMessage"] as? String == "Retrieved")
        let none = try await server.client.ff("GET", "/ff/resources/Celebrity/(gender%20eq%20'nobody')")
        #expect(none.status == 200)
        #expect(none.text == #"{"statusMessage":"Retrieved","result":[]}"#)
        // Seed 001's random pick comes back as an array of one.
        let random = try await server.client.ff(
            "GET", "/ff/resources/Celebrity/(gender%20eq%20'male'%20and%20guid%20eq%20random(guid))")
        #expect((random.json["result"] as? [Any])?.count == 1)
    }

    @Test func deleteAnswers200WithJSON() async throws {
        let server = try await makeFatFractalServer()
        let anna = try await session(server)
        let created = try await server.client.ff("POST", "/ff/resources/Note", #"{"a":1}"#, anna.authHeaders)
        let url = try #require(created.result["ffUrl"] as? String)
        let deleted = try await server.client.ff("DELETE", url, nil, anna.authHeaders)
        #expect(deleted.status == 200)
        #expect(deleted.text == #"{"statusMessage":"Deleted","result":null}"#)
        #expect(deleted.header("Content-Type") == "application/json; charset=utf-8")
        let gone = try await server.client.ff("GET", url)
        #expect(gone.status == 404)
        #expect(gone.json["code"] as? String == "not_found")
        #expect(gone.json["statusMessage"] is String)
        #expect(gone.json["result"] is NSNull)
    }

    @Test func wholeObjectPutEchoingStaleMetadataWithoutIfMatch() async throws {
        let server = try await makeFatFractalServer()
        let anna = try await session(server)
        let created = try await server.client.ff(
            "POST", "/ff/resources/Note", #"{"clazz":"Note","text":"one"}"#, anna.authHeaders)
        var object = created.result
        let url = try #require(object["ffUrl"] as? String)
        // Someone else's change moves the version on; the SDK still holds version 1.
        _ = try await server.client.ff("PUT", url, #"{"clazz":"Note","text":"two"}"#, anna.authHeaders)
        object["text"] = "three"
        let body = String(decoding: try JSONSerialization.data(withJSONObject: object), as: UTF8.self)
        let updated = try await server.client.ff("PUT", url, body, anna.authHeaders)
        #expect(updated.status == 200, "\(updated.text)")
        #expect(updated.json["statusMessage"] as? String == "Updated")
        #expect(updated.result["text"] as? String == "three")
        #expect(updated.result["version"] as? Int == 3)
        #expect(updated.result["createdAt"] as? Int == object["createdAt"] as? Int)
        // Without the dialect, stale metadata is still refused.
        let native = try await server.client.send(
            "PUT", url, headers: [("Content-Type", "application/json"), ("X-Token", anna.sessionId)],
            body: Array(body.utf8))
        #expect(native.status == 400)
        #expect(native.json["code"] as? String == "read_only_field")
    }

    @Test func ffRefsTravelAsReferences() async throws {
        let server = try await makeFatFractalServer()
        let anna = try await session(server)
        let celebrity = try await server.client.ff(
            "POST", "/ff/resources/Celebrity", #"{"clazz":"Celebrity","firstName":"Brad"}"#, anna.authHeaders)
        let celebrityUrl = try #require(celebrity.result["ffUrl"] as? String)
        let wouldYa = try await server.client.ff(
            "POST", "/ff/resources/WouldYa",
            #"{"clazz":"WouldYa","ffUrl":"1000001","ffRefs":[{"name":"selectedCelebrity","type":"FFO","url":"\#(celebrityUrl)"}]}"#,
            anna.authHeaders)
        #expect(wouldYa.status == 201, "\(wouldYa.text)")
        let refs = try #require(wouldYa.result["ffRefs"] as? [[String: String]])
        #expect(refs == [["name": "selectedCelebrity", "type": "FFO", "url": celebrityUrl]])
        #expect(wouldYa.result["selectedCelebrity"] == nil)
        // Stored as a Roost reference, which the native API shows and queries follow.
        let url = try #require(wouldYa.result["ffUrl"] as? String)
        let native = try await server.client.send("GET", url)
        #expect((native.json["selectedCelebrity"] as? [String: String]) == ["ffUrl": celebrityUrl])
    }

    @Test func blobBytesPutToTheMemberAnswerTheObjectWithAnFFBReference() async throws {
        let server = try await makeFatFractalServer()
        let anna = try await session(server)
        let bytes: [UInt8] = [0x89, 0x50, 0x4e, 0x47, 1, 2, 3]
        let (url, _, put) = try await celebrityWithImage(server, anna, bytes)
        #expect(put.status == 200, "\(put.text)")
        #expect(put.json["statusMessage"] as? String == "Updated")
        #expect(put.result["version"] as? Int == 2)
        #expect(put.result["imageData"] == nil)
        let refs = try #require(put.result["ffRefs"] as? [[String: String]])
        #expect(
            refs == [["name": "imageData", "type": "FFB", "url": url + "/imageData", "mime": "image/png"]])
        // The bytes come back as they are, not in an envelope (an <img src> reads them).
        let image = try await server.client.ff("GET", url + "/imageData")
        #expect(image.body == bytes)
        #expect(image.header("Content-Type") == "image/png")
        // A whole-object PUT that leaves the blob out keeps it.
        var object = put.result
        object["firstName"] = "Bradley"
        let body = String(decoding: try JSONSerialization.data(withJSONObject: object), as: UTF8.self)
        let updated = try await server.client.ff("PUT", url, body, anna.authHeaders)
        #expect(updated.status == 200, "\(updated.text)")
        #expect((updated.result["ffRefs"] as? [[String: String]])?.count == 1)
    }

    /// FatFractal.js R1.0.4 without autoLoadBlobs leaves `{ffUrl: ".../imageData"}` in a blob
    /// member it did not load, and an update sends that back as an FFO reference to the object's
    /// own member: that is the member, unchanged (it was 400 read_only_field).
    @Test func aReferenceToTheObjectsOwnBlobMemberKeepsTheBlob() async throws {
        let server = try await makeFatFractalServer()
        let anna = try await session(server)
        let bytes: [UInt8] = [0x89, 0x50, 0x4e, 0x47, 9, 8, 7]
        let (url, guid, put) = try await celebrityWithImage(server, anna, bytes)
        #expect(put.status == 200, "\(put.text)")
        let body =
            #"{"clazz":"Celebrity","guid":"\#(guid)","ffUrl":"\#(url)","firstName":"Bradley","ffRefs":[{"name":"imageData","type":"FFO","url":"\#(url)/imageData"}]}"#
        let updated = try await server.client.ff("PUT", url, body, anna.authHeaders)
        #expect(updated.status == 200, "\(updated.text)")
        #expect(updated.result["firstName"] as? String == "Bradley")
        #expect(
            updated.result["ffRefs"] as? [[String: String]] == [
                ["name": "imageData", "type": "FFB", "url": url + "/imageData", "mime": "image/png"]
            ])
        #expect(try await server.client.ff("GET", url + "/imageData").body == bytes)
        // A reference to another object's member is still no reference: refused as before.
        let other =
            #"{"clazz":"Celebrity","firstName":"B","ffRefs":[{"name":"imageData","type":"FFO","url":"/ff/resources/Celebrity/x1/imageData"}]}"#
        let refused = try await server.client.ff("PUT", url, other, anna.authHeaders)
        #expect(refused.status == 400, "\(refused.text)")
    }

    @Test func ffUserCanEditSaysWhetherTheCallerMayUpdate() async throws {
        let server = try await makeFatFractalServer()
        let anna = try await session(server, "anna")
        let bob = try await session(server, "bob")
        let created = try await server.client.ff("POST", "/ff/resources/Note", #"{"a":1}"#, anna.authHeaders)
        let url = try #require(created.result["ffUrl"] as? String)
        let byAnna = try await server.client.ff("GET", url, nil, anna.authHeaders)
        #expect(byAnna.result["ffUserCanEdit"] as? Bool == true)
        let byBob = try await server.client.ff("GET", url, nil, bob.authHeaders)
        #expect(byBob.result["ffUserCanEdit"] as? Bool == false)
        let anonymous = try await server.client.ff("GET", url)
        #expect(anonymous.result["ffUserCanEdit"] as? Bool == false)
    }

    @Test func aclCallsInFatFractalShapes() async throws {
        let server = try await makeFatFractalServer()
        let anna = try await session(server, "anna")
        let bob = try await session(server, "bob")
        let created = try await server.client.ff("POST", "/ff/resources/Note", #"{"a":1}"#, anna.authHeaders)
        let url = try #require(created.result["ffUrl"] as? String)
        let bobUser = try #require(bob.answer.result["loggedInUser"] as? [String: Any])
        let bobJSON = String(decoding: try JSONSerialization.data(withJSONObject: bobUser), as: UTF8.self)
        let granted = try await server.client.ff(
            "PUT", url + "/ffACL",
            #"{"readUsers":null,"readGroups":null,"writeUsers":[\#(bobJSON)],"writeGroups":null}"#,
            anna.authHeaders)
        #expect(granted.status == 200, "\(granted.text)")
        #expect((granted.result["writeUsers"] as? [String]) == [bob.userGuid])
        let seenByBob = try await server.client.ff("GET", url, nil, bob.authHeaders)
        #expect(seenByBob.result["ffUserCanEdit"] as? Bool == true)
        let byBob = try await server.client.ff("PUT", url, #"{"a":2}"#, bob.authHeaders)
        #expect(byBob.status == 200, "\(byBob.text)")
        // No body: back to the default permissions.
        let reset = try await server.client.ff("PUT", url + "/ffACL", nil, anna.authHeaders)
        #expect(reset.status == 200, "\(reset.text)")
        #expect(reset.text == #"{"statusMessage":"Updated","result":null}"#)
        let seenAgain = try await server.client.ff("GET", url, nil, bob.authHeaders)
        #expect(seenAgain.result["ffUserCanEdit"] as? Bool == false)
        let refused = try await server.client.ff("PUT", url, #"{"a":3}"#, bob.authHeaders)
        #expect(refused.status == 403)
        #expect(refused.json["code"] as? String == "forbidden")
    }

    @Test func compatibilitySettingEnvelopesRequestsWithoutSDKHeaders() async throws {
        let server = try await makeFatFractalServer(definition: #"{"compatibility":"fatfractal"}"#)
        let list = try await server.client.send("GET", "/ff/resources/Celebrity")
        #expect(list.text == #"{"statusMessage":"Retrieved","result":[]}"#)
        let missing = try await server.client.send("GET", "/ff/nothing-here")
        #expect(missing.status == 404)
        #expect(missing.json["statusMessage"] is String)
    }

    @Test func anUnknownCompatibilityIsRefused() {
        #expect(throws: AppDefinitionError.self) {
            try AppDefinition.parse(Array(#"{"compatibility":"parse"}"#.utf8))
        }
    }
}
