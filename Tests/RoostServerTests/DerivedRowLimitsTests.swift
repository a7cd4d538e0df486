import Foundation
import RoostTestSupport
import Testing

/// A write keeps rows beside its object (references, group members, blob members), each one an
/// INSERT in the single writer; a body of 1 MiB could otherwise name some 30,000 of them.
@Suite("Rows a write derives are bounded")
struct DerivedRowLimitsTests {
    static func references(_ count: Int) -> String {
        (0..<count).map { #""r\#($0)":{"ffUrl":"/ff/resources/Thing/t\#($0)"}"# }.joined(separator: ",")
    }

    @Test("1,000 references are kept; 1,001 are refused before the write, by create and by patch")
    func references() async throws {
        let server = try await makeOpenServer()
        let client = server.client
        let kept = try await client.send(
            "POST", "/ff/resources/Note", json: #"{"guid":"full",\#(Self.references(1000))}"#)
        #expect(kept.status == 201)
        let query = try await client.send(
            "GET", "/ff/resources/Note/" + encodeQuery("(r999 eq '/ff/resources/Thing/t999')"))
        #expect(query.status == 200)

        let refused = try await client.send(
            "POST", "/ff/resources/Note", json: #"{"guid":"over",\#(Self.references(1001))}"#)
        #expect(refused.status == 400)
        #expect(refused.json["code"] as? String == "too_many_references")
        #expect(
            refused.json["message"] as? String
                == "A document holds at most 1000 references (members whose value is {\"ffUrl\": …}); split them across objects."
        )
        #expect(try await client.send("GET", "/ff/resources/Note/over").status == 404)

        let patched = try await client.send(
            "PATCH", "/ff/resources/Note/full", json: #"{"one":{"ffUrl":"/ff/resources/Thing/more"}}"#)
        #expect(patched.status == 400)
        #expect(patched.json["code"] as? String == "too_many_references")
        let unchanged = try await client.send("GET", "/ff/resources/Note/full")
        #expect(unchanged.json["version"] as? Int == 1)
        #expect(unchanged.json["one"] == nil)
        await server.stop()
    }

    @Test("references in a nested object count too; array elements are not references")
    func nestedAndArrays() async throws {
        let server = try await makeOpenServer()
        let nested = try await server.client.send(
            "POST", "/ff/resources/Note", json: #"{"outer":{\#(Self.references(1001))}}"#)
        #expect(nested.status == 400)
        #expect(nested.json["code"] as? String == "too_many_references")
        let elements = (0..<2000).map { #"{"ffUrl":"/ff/resources/Thing/t\#($0)"}"# }.joined(separator: ",")
        let array = try await server.client.send(
            "POST", "/ff/resources/Note", json: #"{"list":[\#(elements)]}"#)
        #expect(array.status == 201)
        await server.stop()
    }

    @Test("a group lists at most 10,000 users")
    func groupMembers() async throws {
        let server = try await makeAccountServer()
        let token = try #require(try await server.client.register("owner").json["token"] as? String)
        func group(users count: Int) async throws -> TestResponse {
            let users = (0..<count).map { #""u\#($0)""# }.joined(separator: ",")
            return try await server.client.send(
                "POST", "/ff/resources/FFUserGroup", json: #"{"users":[\#(users)]}"#,
                headers: [("X-Token", token)])
        }
        #expect(try await group(users: 10_000).status == 201)
        let refused = try await group(users: 10_001)
        #expect(refused.status == 400)
        #expect(refused.json["code"] as? String == "too_many_group_members")
        #expect(
            refused.json["message"] as? String
                == "A group lists at most 10000 users; split them across groups.")
        let groups = try await server.client.send(
            "GET", "/ff/resources/FFUserGroup", headers: [("X-Token", token)])
        #expect((groups.json["items"] as? [Any])?.count == 1)
        await server.stop()
    }
}
