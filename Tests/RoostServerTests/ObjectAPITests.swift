import Foundation
import RoostTestSupport
import Testing

let firstObject =
    #"{"guid":"g0001","ffUrl":"/ff/resources/Post/g0001","createdBy":null,"createdAt":1790000000001,"updatedBy":null,"updatedAt":1790000000001,"version":1,"content":"hello","n":12345678901234567890,"d":0.1000000000000000055511151231257827,"nested":{"a":[1,{"b":null}]}}"#

@Suite("Objects API")
struct ObjectAPITests {
    static let errorScenarios: [APIScenario] = [
        APIScenario(
            name: "malformed JSON names the byte", method: "POST", path: "/ff/resources/Post",
            body: #"{"a": tru}"#, status: 400,
            exactBody:
                #"{"status":400,"code":"invalid_json","message":"The body is not valid JSON: invalid literal at byte 6.","details":{"offset":6}}"#
        ),
        APIScenario(
            name: "empty body", method: "POST", path: "/ff/resources/Post", body: "", status: 400,
            exactBody:
                #"{"status":400,"code":"invalid_json","message":"The body is not valid JSON: expected a JSON value but the input ended at byte 0.","details":{"offset":0}}"#
        ),
        APIScenario(
            name: "an array is not an object", method: "POST", path: "/ff/resources/Post", body: "[1,2]",
            status: 400,
            exactBody:
                #"{"status":400,"code":"invalid_body","message":"The body must be a JSON object, not a array.","details":{"found":"array"}}"#
        ),
        APIScenario(
            name: "a string is not an object", method: "POST", path: "/ff/resources/Post", body: #""x""#,
            status: 400, code: "invalid_body"),
        APIScenario(
            name: "bad collection name", method: "POST", path: "/ff/resources/9lives", body: "{}",
            status: 400, code: "invalid_collection"),
        APIScenario(
            name: "collection name with a dash", method: "GET", path: "/ff/resources/a-b", status: 400,
            code: "invalid_collection"),
        APIScenario(
            name: "collection name too long", method: "GET",
            path: "/ff/resources/" + String(repeating: "a", count: 65), status: 400,
            code: "invalid_collection"),
        APIScenario(
            name: "metadata in a create", method: "POST", path: "/ff/resources/Post",
            body: #"{"createdAt":5}"#, status: 400,
            exactBody:
                #"{"status":400,"code":"read_only_field","message":"'createdAt' is metadata that Roost maintains; leave it out of the body or send it unchanged.","details":{"field":"createdAt"}}"#
        ),
        APIScenario(
            name: "version in a create", method: "POST", path: "/ff/resources/Post", body: #"{"version":1}"#,
            status: 400, code: "read_only_field"),
        APIScenario(
            name: "ffUrl in a create", method: "POST", path: "/ff/resources/Post", body: #"{"ffUrl":"/x"}"#,
            status: 400, code: "read_only_field"),
        APIScenario(
            name: "malformed guid in a create", method: "POST", path: "/ff/resources/Post",
            body: #"{"guid":"a b"}"#, status: 400, code: "invalid_guid"),
        APIScenario(
            name: "numeric guid in a create", method: "POST", path: "/ff/resources/Post",
            body: #"{"guid":12}"#, status: 400, code: "invalid_guid"),
        APIScenario(
            name: "unknown guid", method: "GET", path: "/ff/resources/Post/nope", status: 404,
            exactBody:
                #"{"status":404,"code":"not_found","message":"There is no object 'nope' in 'Post'.","details":{"collection":"Post","guid":"nope"}}"#
        ),
        APIScenario(
            name: "unknown guid on PUT", method: "PUT", path: "/ff/resources/Post/nope", body: "{}",
            status: 404, code: "not_found"),
        APIScenario(
            name: "unknown guid on PATCH", method: "PATCH", path: "/ff/resources/Post/nope", body: "{}",
            status: 404, code: "not_found"),
        APIScenario(
            name: "unknown guid on DELETE", method: "DELETE", path: "/ff/resources/Post/nope", status: 404,
            code: "not_found"),
        APIScenario(name: "unknown route", method: "GET", path: "/nowhere", status: 404, code: "not_found"),
        APIScenario(
            name: "wrong method", method: "DELETE", path: "/ff/resources/Post", status: 405,
            code: "method_not_allowed",
            expectedHeaders: [("Allow", "GET, HEAD, POST")]),
        APIScenario(
            name: "count not a number", method: "GET", path: "/ff/resources/Post?count=ten", status: 400,
            code: "invalid_parameter"),
        APIScenario(
            name: "count over the maximum", method: "GET", path: "/ff/resources/Post?count=1001", status: 400,
            code: "invalid_parameter"),
        APIScenario(
            name: "count zero", method: "GET", path: "/ff/resources/Post?count=0", status: 400,
            code: "invalid_parameter"),
        APIScenario(
            name: "negative start", method: "GET", path: "/ff/resources/Post?start=-1", status: 400,
            code: "invalid_parameter"),
        APIScenario(
            name: "sort on a bad field", method: "GET", path: "/ff/resources/Post?sort=a-b", status: 400,
            code: "invalid_parameter"),
        APIScenario(
            name: "sort with a bad direction", method: "GET", path: "/ff/resources/Post?sort=a%20up",
            status: 400, code: "invalid_parameter"),
        APIScenario(
            name: "nesting deeper than 512", method: "POST", path: "/ff/resources/Post",
            body: #"{"a":"# + String(repeating: "[", count: 600) + String(repeating: "]", count: 600) + "}",
            status: 400, code: "invalid_json"),
        APIScenario(
            name: "invalid UTF-8 escape in a string", method: "POST", path: "/ff/resources/Post",
            body: #"{"a":"\ud800"}"#, status: 400,
            code: "invalid_json"),
        APIScenario(
            name: "unknown collection lists empty", method: "GET", path: "/ff/resources/Nobody", status: 200,
            exactBody: #"{"items":[]}"#),
        APIScenario(name: "health", method: "GET", path: "/health", status: 200, exactBody: #"{"status":"ok"}"#),
    ]

    @Test("every bad input gets its clear error", arguments: errorScenarios)
    func errors(_ scenario: APIScenario) async throws {
        let server = try await makePredictableServer()
        try await scenario.run(against: server)
        // Nothing was stored by a refused write.
        let list = try await server.client.send("GET", "/ff/resources/Post?total=true")
        #expect(list.json["total"] as? Int == 0)
        await server.stop()
    }

    @Test("an oversize body gets 413 and nothing is stored")
    func oversizeBody() async throws {
        let server = try await makePredictableServer(maxBody: 1000)
        let big = #"{"a":""# + String(repeating: "x", count: 2000) + #""}"#
        try await APIScenario(
            name: "oversize", method: "POST", path: "/ff/resources/Post", body: big, status: 413,
            code: "body_too_large"
        ).run(against: server)
        #expect(
            try await server.client.send("GET", "/ff/resources/Post?total=true").json["total"] as? Int == 0)
        await server.stop()
    }

    @Test("create returns the stored object with metadata, exact numbers and headers")
    func create() async throws {
        let server = try await makePredictableServer()
        let body =
            #"{"content":"hello","n":12345678901234567890,"d":0.1000000000000000055511151231257827,"nested":{"a":[1,{"b":null}]}}"#
        try await APIScenario(
            name: "create", method: "POST", path: "/ff/resources/Post", body: body, status: 201,
            exactBody: firstObject,
            expectedHeaders: [("ETag", "\"1\""), ("Location", "/ff/resources/Post/g0001")]
        ).run(against: server)
        try await APIScenario(
            name: "read back", method: "GET", path: "/ff/resources/Post/g0001", status: 200,
            exactBody: firstObject
        ).run(against: server)
        try await APIScenario(
            name: "list", method: "GET", path: "/ff/resources/Post?total=true", status: 200,
            exactBody: #"{"items":["# + firstObject + #"],"total":1}"#
        ).run(against: server)
        await server.stop()
    }

    @Test("a client-chosen guid is kept, and reusing it is a 409 that changes nothing")
    func clientGuid() async throws {
        let server = try await makePredictableServer()
        let created = try await server.client.send(
            "POST", "/ff/resources/Note", json: #"{"guid":"my-id_1","text":"first"}"#)
        #expect(created.status == 201)
        #expect(created.json["guid"] as? String == "my-id_1")
        try await APIScenario(
            name: "again", method: "POST", path: "/ff/resources/Note",
            body: #"{"guid":"my-id_1","text":"second"}"#, status: 409,
            exactBody:
                #"{"status":409,"code":"conflict","message":"An object 'my-id_1' already exists in 'Note'.","details":{"collection":"Note","guid":"my-id_1"}}"#
        ).run(against: server)
        #expect(
            try await server.client.send("GET", "/ff/resources/Note/my-id_1").json["text"] as? String
                == "first")
        await server.stop()
    }

    @Test("versions, If-Match, If-None-Match, PUT and PATCH")
    func versionsAndConditionalRequests() async throws {
        let server = try await makePredictableServer()
        let client = server.client
        _ = try await client.send("POST", "/ff/resources/Post", json: #"{"title":"a","tags":{"x":1,"y":2}}"#)
        let path = "/ff/resources/Post/g0001"

        let notModified = try await client.send("GET", path, headers: [("If-None-Match", "\"1\"")])
        #expect(notModified.status == 304)
        #expect(notModified.header("ETag") == "\"1\"")
        #expect(try await client.send("GET", path, headers: [("If-None-Match", "\"7\"")]).status == 200)

        let stale = try await client.send(
            "PUT", path, json: #"{"title":"b"}"#, headers: [("If-Match", "\"9\"")])
        #expect(stale.status == 412)
        #expect(
            stale.text
                == #"{"status":412,"code":"version_mismatch","message":"The object changed since you read it (it is at version 1); fetch it again and retry.","details":{"ifMatch":"\"9\"","currentVersion":1}}"#
        )

        // The stepping clock ticks once per write attempt, refused ones included.
        let replaced = try await client.send(
            "PUT", path, json: #"{"title":"b"}"#, headers: [("If-Match", "\"1\"")])
        #expect(replaced.status == 200)
        #expect(replaced.header("ETag") == "\"2\"")
        #expect(
            replaced.text
                == #"{"guid":"g0001","ffUrl":"/ff/resources/Post/g0001","createdBy":null,"createdAt":1790000000001,"updatedBy":null,"updatedAt":1790000000003,"version":2,"title":"b"}"#
        )

        // Sending metadata back unchanged is fine (a fetched object can be PUT back); changing it is not.
        let echoed = try await client.send(
            "PUT", path,
            json: String(decoding: replaced.body, as: UTF8.self).replacingOccurrences(
                of: #""title":"b""#, with: #""title":"c""#))
        #expect(echoed.status == 200)
        #expect(echoed.json["version"] as? Int == 3)
        let forged = try await client.send("PATCH", path, json: #"{"createdBy":"someone"}"#)
        #expect(forged.status == 400)
        #expect(forged.json["code"] as? String == "read_only_field")

        let patched = try await client.send(
            "PATCH", path, json: #"{"title":null,"more":{"deep":true},"list":[1]}"#,
            headers: [("If-Match", "W/\"3\"")])
        #expect(patched.status == 200)
        #expect(
            patched.text
                == #"{"guid":"g0001","ffUrl":"/ff/resources/Post/g0001","createdBy":null,"createdAt":1790000000001,"updatedBy":null,"updatedAt":1790000000006,"version":4,"more":{"deep":true},"list":[1]}"#
        )

        let head = try await client.send("HEAD", path)
        #expect(head.status == 200)
        #expect(head.body.isEmpty)
        #expect(head.header("Content-Length") == String(patched.body.count))

        #expect(try await client.send("DELETE", path, headers: [("If-Match", "\"3\"")]).status == 412)
        #expect(try await client.send("GET", path).json["version"] as? Int == 4)
        #expect(try await client.send("DELETE", path, headers: [("If-Match", "\"4\"")]).status == 204)
        #expect(try await client.send("GET", path).status == 404)
        await server.stop()
    }

    @Test("a failed update leaves the object as it was")
    func failedUpdatesChangeNothing() async throws {
        let server = try await makePredictableServer()
        let client = server.client
        let created = try await client.send("POST", "/ff/resources/Post", json: #"{"title":"keep"}"#)
        let path = "/ff/resources/Post/g0001"
        for body in [#"{"title": }"#, "[]", #"{"version":99}"#, #"{"guid":"other"}"#] {
            let response = try await client.send("PUT", path, json: body)
            #expect(response.status == 400, "PUT \(body)")
            #expect(try await client.send("PATCH", path, json: body).status == 400, "PATCH \(body)")
        }
        #expect(try await client.send("GET", path).body == created.body)
        await server.stop()
    }

    @Test("sorting and paging")
    func sortingAndPaging() async throws {
        let server = try await makePredictableServer()
        for (name, age) in [("carol", 30), ("alice", 25), ("bob", 35), ("dave", 25)] {
            _ = try await server.client.send(
                "POST", "/ff/resources/Person", json: #"{"name":"\#(name)","age":\#(age)}"#)
        }
        func names(_ query: String) async throws -> [String] {
            let items =
                try await server.client.send("GET", "/ff/resources/Person?" + query).json["items"]
                as? [[String: Any]] ?? []
            return items.compactMap { $0["name"] as? String }
        }
        #expect(try await names("") == ["carol", "alice", "bob", "dave"])
        #expect(try await names("sort=name") == ["alice", "bob", "carol", "dave"])
        #expect(try await names("sort=age%20desc,name%20asc") == ["bob", "carol", "alice", "dave"])
        #expect(try await names("sort=age+asc,name+desc&count=2") == ["dave", "alice"])
        #expect(try await names("sort=createdAt%20desc&start=1&count=2") == ["bob", "alice"])
        #expect(try await names("start=10") == [])
        await server.stop()
    }

    @Test("objects survive a restart")
    func persistence() async throws {
        let directory = TestServer.makeTemporaryDirectory()
        let first = try await makeOpenServer(dataDirectory: directory)
        let created = try await first.client.send(
            "POST", "/ff/resources/Post", json: #"{"text":"durable ☃"}"#)
        let guid = try #require(created.json["guid"] as? String)
        await first.stop()
        let second = try await makeOpenServer(dataDirectory: directory)
        let read = try await second.client.send("GET", "/ff/resources/Post/\(guid)")
        #expect(read.status == 200)
        #expect(read.body == created.body)
        await second.stop()
    }

    @Test("8 concurrent writers × 200 creates are all stored, with consistent versions")
    func concurrentWriters() async throws {
        let server = try await makeOpenServer()
        let client = server.client
        let guids = try await withThrowingTaskGroup(of: [String].self) { group in
            for writer in 0..<8 {
                group.addTask {
                    var made: [String] = []
                    for index in 0..<200 {
                        let response = try await client.send(
                            "POST", "/ff/resources/Load", json: #"{"writer":\#(writer),"index":\#(index)}"#)
                        guard response.status == 201, let guid = response.json["guid"] as? String else {
                            throw TestClientError(
                                description: "create failed: \(response.status) \(response.text)")
                        }
                        made.append(guid)
                    }
                    return made
                }
            }
            var all: [String] = []
            for try await made in group { all += made }
            return all
        }
        #expect(guids.count == 1600)
        #expect(Set(guids).count == 1600)
        let page = try await client.send("GET", "/ff/resources/Load?total=true&count=1000")
        #expect(page.json["total"] as? Int == 1600)
        let items = page.json["items"] as? [[String: Any]] ?? []
        #expect(items.allSatisfy { $0["version"] as? Int == 1 })

        // Concurrent PATCHes of one object: every one applies once, so the version counts them all.
        try await withThrowingTaskGroup(of: Void.self) { group in
            for writer in 0..<8 {
                group.addTask {
                    for _ in 0..<25 {
                        let response = try await client.send(
                            "PATCH", "/ff/resources/Load/\(guids[0])", json: #"{"w\#(writer)":true}"#)
                        #expect(response.status == 200)
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(try await client.send("GET", "/ff/resources/Load/\(guids[0])").json["version"] as? Int == 201)
        await server.stop()
    }

    @Test("metrics in the Prometheus format")
    func metrics() async throws {
        let server = try await makeOpenServer()
        _ = try await server.client.send("GET", "/ff/resources/Post/none")
        // Over a socket: the open connection is the one asking.
        let metrics = try await server.liveClient.send("GET", "/metrics")
        #expect(metrics.status == 200)
        #expect(metrics.header("Content-Type") == "text/plain; version=0.0.4; charset=utf-8")
        #expect(
            metrics.text.contains(
                #"roost_http_requests_total{route="/ff/resources/:collection/:guid",status="404"} 1"#))
        #expect(metrics.text.contains("# TYPE roost_http_request_duration_seconds histogram"))
        #expect(metrics.text.contains("roost_http_open_connections 1"))
        await server.stop()
    }
}
