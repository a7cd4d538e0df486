import Foundation
import RoostCore
import RoostServer
import RoostTestSupport
import Testing

/// Blob members: streamed uploads, ranges, ETags, dedup, safety headers, permissions.
@Suite("Blobs") struct BlobTests {
    func server(maxBody: Int = 1024, definition: AppDefinition = openRules) async throws -> TestServer {
        try await TestServer { configuration in
            configuration.appDefinition = definition
            configuration.maxBodyBytes = maxBody
            configuration.maxBlobBytes = 50 * 1024 * 1024
            configuration.passwordHasher = PasswordHasher.cheapForTests()
        }
    }

    func newObject(_ server: TestServer, _ collection: String = "Celebrity", headers: [(String, String)] = [])
        async throws -> String
    {
        let created = try await server.client.send(
            "POST", "/ff/resources/\(collection)", json: #"{"name":"Ada"}"#, headers: headers)
        return try #require(created.json["guid"] as? String, "\(created.text)")
    }

    static func sha256(_ bytes: [UInt8]) -> String {
        let digest = StreamingDigest()
        digest.update(bytes[...])
        return Sodium.hex(digest.finish())
    }

    func blobFiles(_ server: TestServer) -> [String] {
        let root = server.dataDirectory + "/blobs"
        let enumerator = FileManager.default.enumerator(atPath: root)
        var files: [String] = []
        while let path = enumerator?.nextObject() as? String {
            if path.split(separator: "/").count == 3 && !path.hasPrefix("tmp") { files.append(path) }
        }
        return files
    }

    func temporaryFiles(_ server: TestServer) -> [String] {
        (try? FileManager.default.contentsOfDirectory(atPath: server.dataDirectory + "/blobs/tmp")) ?? []
    }

    @Test(arguments: [0, 1, 5 * 1024 * 1024])
    func bytesGoInAndComeBackExactly(size: Int) async throws {
        // The JSON body limit is 1 KiB: uploads stream past it.
        let server = try await server()
        let guid = try await newObject(server)
        let bytes = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
        let path = "/ff/resources/Celebrity/\(guid)/imageData"
        let put = try await server.client.send(
            "PUT", path, headers: [("Content-Type", "application/x-test")], body: bytes)
        #expect(put.status == 200, "\(put.text)")
        #expect(put.json["version"] as? Int == 2)
        #expect(put.header("ETag") == "\"2\"")
        let descriptor = (put.json["imageData"] as? [String: Any])?["blob"] as? [String: Any]
        #expect(descriptor?["contentType"] as? String == "application/x-test")
        #expect(descriptor?["size"] as? Int == size)
        #expect(descriptor?["sha256"] as? String == Self.sha256(bytes))
        #expect(descriptor?["url"] as? String == path)

        let got = try await server.client.send("GET", path)
        #expect(got.status == 200)
        let sameBytes = got.body == bytes  // a Bool, so a failure does not print megabytes
        #expect(sameBytes)
        #expect(got.body.count == size)
        #expect(got.header("Content-Type") == "application/x-test")
        #expect(got.header("Content-Length") == String(size))
        #expect(got.header("ETag") == "\"\(Self.sha256(bytes))\"")
        #expect(got.header("Cache-Control") == "private")
        #expect(got.header("Accept-Ranges") == "bytes")
        #expect(got.header("X-Content-Type-Options") == "nosniff")
        #expect(got.header("Content-Disposition") == nil)

        let head = try await server.client.send("HEAD", path)
        #expect(head.status == 200)
        #expect(head.header("Content-Length") == String(size))
        #expect(temporaryFiles(server).isEmpty)
    }

    @Test func anUploadOverTheLimitIsRefusedBeforeItsBody() async throws {
        let server = try await server()
        let guid = try await newObject(server)
        let connection = try RawConnection(port: server.port)
        connection.send(
            "PUT /ff/resources/Celebrity/\(guid)/video HTTP/1.1\r\nHost: x\r\nContent-Length: \(60 * 1024 * 1024)\r\n\r\n"
        )
        let refused = try await connection.response()
        #expect(refused.status == 413)
        #expect(refused.json["code"] as? String == "body_too_large")
        #expect(refused.json["message"] as? String == "The request body exceeds the limit of 52428800 bytes.")
        let object = try await server.client.send("GET", "/ff/resources/Celebrity/\(guid)")
        #expect(object.json["version"] as? Int == 1)
        #expect(object.json["video"] == nil)
        #expect(temporaryFiles(server).isEmpty)
    }

    @Test(
        arguments: [
            ("bytes=0-0", 206, "bytes 0-0/100", 0..<1),
            ("bytes=99-99", 206, "bytes 99-99/100", 99..<100),
            ("bytes=10-19", 206, "bytes 10-19/100", 10..<20),
            ("bytes=-10", 206, "bytes 90-99/100", 90..<100),
            ("bytes=95-", 206, "bytes 95-99/100", 95..<100),
            ("bytes=90-500", 206, "bytes 90-99/100", 90..<100),
            ("bytes=0-1,5-6", 200, nil, 0..<100),
            ("items=0-1", 200, nil, 0..<100),
        ] as [(String, Int, String?, Range<Int>)])
    func singleRanges(range: String, status: Int, contentRange: String?, slice: Range<Int>) async throws {
        let server = try await server()
        let guid = try await newObject(server)
        let bytes = (0..<100).map { UInt8($0) }
        let path = "/ff/resources/Celebrity/\(guid)/data"
        _ = try await server.client.send("PUT", path, body: bytes)
        let got = try await server.client.send("GET", path, headers: [("Range", range)])
        #expect(got.status == status)
        #expect(got.header("Content-Range") == contentRange)
        #expect(got.body == Array(bytes[slice]))
    }

    @Test(arguments: ["bytes=100-", "bytes=100-200", "bytes=-0"])
    func unsatisfiableRanges(range: String) async throws {
        let server = try await server()
        let guid = try await newObject(server)
        let path = "/ff/resources/Celebrity/\(guid)/data"
        _ = try await server.client.send("PUT", path, body: (0..<100).map { UInt8($0) })
        let got = try await server.client.send("GET", path, headers: [("Range", range)])
        #expect(got.status == 416)
        #expect(got.header("Content-Range") == "bytes */100")
        #expect(got.json["code"] as? String == "range_not_satisfiable")
        #expect(got.json["message"] as? String == "The range lies outside the blob's 100 bytes.")
        #expect(got.header("Content-Disposition") == nil)
    }

    @Test func anUploadWithAnIdempotencyKeyRunsOnceAndOtherBytesAreRefused() async throws {
        let server = try await server()
        let guid = try await newObject(server)
        let path = "/ff/resources/Celebrity/\(guid)/data"
        let key = [("Idempotency-Key", "upload-1")]
        let first = try await server.client.send("PUT", path, headers: key, body: [1, 2, 3])
        let again = try await server.client.send("PUT", path, headers: key, body: [1, 2, 3])
        #expect(first.status == 200)
        #expect(again.header("Idempotent-Replayed") == "true")
        #expect(again.json["version"] as? Int == 2)
        let other = try await server.client.send("PUT", path, headers: key, body: [9, 9])
        #expect(other.status == 422)
        #expect(other.json["code"] as? String == "idempotency_key_reused")
        #expect(try await server.client.send("GET", path).body == [1, 2, 3])
        #expect(temporaryFiles(server).isEmpty)
    }

    @Test func anUnchangedBlobRevalidatesWith304() async throws {
        let server = try await server()
        let guid = try await newObject(server)
        let path = "/ff/resources/Celebrity/\(guid)/data"
        let bytes = Array("hello".utf8)
        _ = try await server.client.send("PUT", path, body: bytes)
        let tag = "\"\(Self.sha256(bytes))\""
        let unchanged = try await server.client.send("GET", path, headers: [("If-None-Match", tag)])
        #expect(unchanged.status == 304)
        #expect(unchanged.body.isEmpty)
        #expect(unchanged.header("ETag") == tag)
        _ = try await server.client.send("PUT", path, body: Array("world".utf8))
        let changed = try await server.client.send("GET", path, headers: [("If-None-Match", tag)])
        #expect(changed.status == 200)
        #expect(changed.text == "world")
    }

    /// (`roost blobs gc` works on a data folder's SQLite database.)
    @Test(.enabled(if: TestBackend.isSQLite))
    func identicalBytesAreStoredOnceAndCollectedWhenUnreferenced() async throws {
        let server = try await server()
        let first = try await newObject(server)
        let second = try await newObject(server)
        let bytes = Array(repeating: UInt8(7), count: 4096)
        for guid in [first, second] {
            #expect(
                try await server.client.send("PUT", "/ff/resources/Celebrity/\(guid)/photo", body: bytes)
                    .status == 200)
        }
        #expect(blobFiles(server).count == 1)
        #expect(try await server.client.send("DELETE", "/ff/resources/Celebrity/\(first)").status == 204)
        let other = try await server.client.send("GET", "/ff/resources/Celebrity/\(second)/photo")
        #expect(other.body == bytes)

        let kept = try await runRoost(["blobs", "gc", "--data-dir", server.dataDirectory, "--min-age", "0"])
        #expect(kept.status == 0)
        #expect(kept.output == "freed 0 blobs (0 bytes) and 0 abandoned uploads; 1 blob kept\n")
        #expect(
            try await server.client.send("DELETE", "/ff/resources/Celebrity/\(second)/photo").status == 204)
        #expect(try await server.client.send("GET", "/ff/resources/Celebrity/\(second)/photo").status == 404)
        let young = try await runRoost(["blobs", "gc", "--data-dir", server.dataDirectory])
        #expect(young.output.hasPrefix("freed 0 blobs"), "an hour's grace for uploads in flight")
        let freed = try await runRoost(["blobs", "gc", "--data-dir", server.dataDirectory, "--min-age", "0"])
        #expect(freed.output == "freed 1 blob (4096 bytes) and 0 abandoned uploads; 0 blobs kept\n")
        #expect(blobFiles(server).isEmpty)
    }

    @Test func theJSONAPICannotWriteBlobMembers() async throws {
        let server = try await server(maxBody: 10_000)
        let guid = try await newObject(server)
        let path = "/ff/resources/Celebrity/\(guid)"
        let put = try await server.client.send("PUT", path + "/photo", body: Array("x".utf8))
        let descriptor = try #require(put.json["photo"] as? [String: Any])
        let echoed = String(decoding: try JSONSerialization.data(withJSONObject: descriptor), as: UTF8.self)
        let forged = #"{"blob":{"sha256":"\#(String(repeating: "a", count: 64))"}}"#
        let cases: [(String, String, String)] = [
            ("PUT", path, #"{"name":"B","photo":"replaced"}"#),
            ("PUT", path, #"{"name":"B","photo":\#(forged)}"#),
            ("PATCH", path, #"{"photo":null}"#),
            ("PATCH", path, #"{"photo":{"blob":{"sha256":"x"}}}"#),
            ("PATCH", path, #"{"other":\#(forged)}"#),
            ("POST", "/ff/resources/Celebrity", #"{"photo":\#(forged)}"#),
        ]
        for (method, target, body) in cases {
            let refused = try await server.client.send(method, target, json: body)
            #expect(refused.status == 400, "\(method) \(body)")
            #expect(refused.json["code"] as? String == "read_only_field", "\(method) \(body)")
        }
        // Leaving it out of a PUT, echoing it, and patching other fields keep it.
        #expect(try await server.client.send("PUT", path, json: #"{"name":"B"}"#).status == 200)
        #expect(
            try await server.client.send("PUT", path, json: #"{"name":"C","photo":\#(echoed)}"#).status == 200
        )
        #expect(try await server.client.send("PATCH", path, json: #"{"name":"D"}"#).status == 200)
        let object = try await server.client.send("GET", path)
        #expect(object.json["name"] as? String == "D")
        #expect(((object.json["photo"] as? [String: Any])?["blob"] as? [String: Any])?["size"] as? Int == 1)
        #expect(try await server.client.send("GET", path + "/photo").text == "x")
    }

    @Test(
        arguments: [
            ([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0], nil, "image/png", nil),
            ([0xFF, 0xD8, 0xFF, 0xE0, 0], nil, "image/jpeg", nil),
            (Array("GIF89a..".utf8), nil, "image/gif", nil),
            (Array("RIFF\0\0\0\0WEBPVP8 ".utf8), nil, "image/webp", nil),
            (Array("plain".utf8), nil, "application/octet-stream", nil),
            (Array("<script>alert(1)</script>".utf8), "text/html", "text/html", "attachment"),
            (Array("<svg/>".utf8), "image/svg+xml", "image/svg+xml", "attachment"),
            (
                Array("<x/>".utf8), "application/xhtml+xml; charset=utf-8",
                "application/xhtml+xml; charset=utf-8", "attachment"
            ),
            ([0x89, 0x50, 0x4E, 0x47], "image/png", "image/png", nil),
        ] as [([UInt8], String?, String, String?)])
    func contentTypesAreDetectedAndActiveContentIsNeverRendered(
        bytes: [UInt8], declared: String?, served: String, disposition: String?
    ) async throws {
        let server = try await server()
        let guid = try await newObject(server)
        let path = "/ff/resources/Celebrity/\(guid)/file"
        let put = try await server.client.send(
            "PUT", path, headers: declared.map { [("Content-Type", $0)] } ?? [], body: bytes)
        #expect(put.status == 200)
        let got = try await server.client.send("GET", path)
        #expect(got.header("Content-Type") == served)
        #expect(got.header("Content-Disposition") == disposition)
        #expect(got.header("X-Content-Type-Options") == "nosniff")
    }

    @Test(arguments: ["nonsense", "a/b/c", "/png", "text/"])
    func aMalformedContentTypeIsRefusedAndNothingKept(contentType: String) async throws {
        let server = try await server()
        let guid = try await newObject(server)
        let refused = try await server.client.send(
            "PUT", "/ff/resources/Celebrity/\(guid)/file", headers: [("Content-Type", contentType)],
            body: [1, 2, 3])
        #expect(refused.status == 400)
        #expect(refused.json["code"] as? String == "invalid_content_type")
        #expect(temporaryFiles(server).isEmpty)
        #expect(blobFiles(server).isEmpty)
    }

    @Test func blobsFollowTheirObjectsRules() async throws {
        let definition = try AppDefinition.parse(
            Array(
                #"{"collections":{"Photo":{"rules":{"read":"public","create":"loggedIn","update":"createdBy eq @user.guid"}},"Diary":{"rules":{"read":"createdBy eq @user.guid","create":"loggedIn","update":"createdBy eq @user.guid"}}}}"#
                    .utf8))
        let server = try await server(definition: definition)
        let owner = try #require(try await server.client.register("olga").json["token"] as? String)
        let other = try #require(try await server.client.register("pete").json["token"] as? String)
        let photo =
            "/ff/resources/Photo/\(try await newObject(server, "Photo", headers: [("X-Token", owner)]))/image"
        #expect(try await server.client.send("PUT", photo, body: [1]).status == 401)
        #expect(
            try await server.client.send("PUT", photo, headers: [("X-Token", other)], body: [1]).status == 403
        )
        #expect(
            try await server.client.send("PUT", photo, headers: [("X-Token", owner)], body: [1, 2]).status
                == 200)
        #expect(try await server.client.send("GET", photo).body == [1, 2], "public read")
        #expect(try await server.client.send("DELETE", photo, headers: [("X-Token", other)]).status == 403)

        let diary =
            "/ff/resources/Diary/\(try await newObject(server, "Diary", headers: [("X-Token", owner)]))/scan"
        #expect(
            try await server.client.send("PUT", diary, headers: [("X-Token", owner)], body: [3]).status == 200
        )
        #expect(try await server.client.send("GET", diary, headers: [("X-Token", other)]).status == 404)
        #expect(try await server.client.send("GET", diary).status == 404)
        #expect(
            try await server.client.send("PUT", diary, headers: [("X-Token", other)], body: [4]).status == 404
        )
        #expect(try await server.client.send("GET", diary, headers: [("X-Token", owner)]).body == [3])
        let badToken = try await server.client.send(
            "PUT", photo, headers: [("X-Token", "nonsense")], body: [5])
        #expect(badToken.status == 401)
        #expect(badToken.json["code"] as? String == "invalid_token")
        #expect(temporaryFiles(server).isEmpty, "refused uploads leave nothing behind")
    }

    @Test func deletingAMemberBumpsTheVersionAndAMissingOneIs404() async throws {
        let server = try await server()
        let guid = try await newObject(server)
        let path = "/ff/resources/Celebrity/\(guid)/data"
        #expect(try await server.client.send("GET", path).status == 404)
        #expect(try await server.client.send("DELETE", path).status == 404)
        _ = try await server.client.send("PUT", path, body: [1])
        let stale = try await server.client.send("DELETE", path, headers: [("If-Match", "\"1\"")])
        #expect(stale.status == 412)
        #expect(try await server.client.send("DELETE", path, headers: [("If-Match", "\"2\"")]).status == 204)
        let object = try await server.client.send("GET", "/ff/resources/Celebrity/\(guid)")
        #expect(object.json["version"] as? Int == 3)
        #expect(object.json["data"] == nil)
        let noLength = try await server.client.send("PUT", path)
        #expect(noLength.status == 411)
        #expect(noLength.json["code"] as? String == "length_required")
        let badMember = try await server.client.send("PUT", "/ff/resources/Celebrity/\(guid)/guid", body: [1])
        #expect(badMember.status == 400)
        #expect(badMember.json["code"] as? String == "invalid_field")
    }
}
