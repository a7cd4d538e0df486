import Foundation
import RoostClient
import Testing

/// The query builder escapes every value and refuses what the language cannot hold.
@Suite struct QueryBuilderTests {
    let client = try! Roost(
        configuration: {
            var configuration = RoostConfiguration(
                serverURL: URL(string: "http://127.0.0.1:9")!,
                storageFolder: NSTemporaryDirectory() + "roost-query-" + UUID().uuidString,
                credentialStore: InMemoryCredentialStore(), transport: ScriptedTransport([]))
            configuration.deliversInBackground = false
            return configuration
        }())

    @Test(arguments: [
        ("plain", QueryValue("male"), "'male'"),
        ("quote", QueryValue("O'Brien"), "'O''Brien'"),
        ("injection", QueryValue("x') or (guid ne '"), "'x'') or (guid ne '''"),
        ("integer", QueryValue(42), "42"),
        ("negative", QueryValue(-7), "-7"),
        ("double", QueryValue(2.5), "2.5"),
        ("infinity", QueryValue(Double.infinity), "null"),
        ("bool", QueryValue(true), "true"),
        ("null", nil as QueryValue, "null"),
        ("random", QueryValue.randomGuid, "random(guid)"),
    ])
    func valuesAreWrittenAsLiterals(name: String, value: QueryValue, literal: String) {
        #expect(value.literal == literal, "\(name)")
    }

    @Test func conditionsCombineWithParentheses() throws {
        let query = client.query(Celebrity.self).where("gender", .eq, "male").and("guid", .ne, "a'b")
        #expect(
            try query.path()
                == "/ff/resources/Celebrity/(gender%20eq%20%27male%27%20and%20guid%20ne%20%27a%27%27b%27)")
        let either = client.query(Celebrity.self).where("a", .lt, 1).or("b", .gte, 2)
        #expect(try either.path() == "/ff/resources/Celebrity/(a%20lt%201%20or%20b%20gte%202)")
        let composed =
            QueryCondition.field("tags", .containsAny, "red blue")
            && !(QueryCondition.field("name", .matches, "^A") || .field("n.x", .eq, nil))
        #expect(
            try composed.text()
                == "(tags contains_any 'red blue' and not ((name matches '^A' or n.x eq null)))")
        #expect(try client.query(Celebrity.self).path() == "/ff/resources/Celebrity")
        #expect(
            try client.query(Celebrity.self, raw: "gender eq 'female'").path()
                == "/ff/resources/Celebrity/(gender%20eq%20%27female%27)")
    }

    @Test func pagingSortingAndDepthGoInTheQueryString() throws {
        let query = client.query(Celebrity.self).where("gender", .eq, "f").sorted(by: "name")
            .sorted(by: "createdAt", descending: true).inlining(depth: 2)
        #expect(
            try query.path(start: 40, count: 20)
                == "/ff/resources/Celebrity/(gender%20eq%20%27f%27)?sort=name%20asc%2CcreatedAt%20desc&start=40&count=20&depthRef=2"
        )
    }

    @Test(arguments: [
        "", "a b", "1abc", "a..b", "a.", "na'me", "caf\u{e9}", String(repeating: "a", count: 257),
    ])
    func fieldsOutsideTheLanguageAreRefused(field: String) {
        #expect {
            try client.query(Celebrity.self).where(field, .eq, "x").path()
        } throws: { error in
            (error as? RoostError)?.code == "invalid_query" && (error as? RoostError)?.status == nil
        }
    }

    @Test func nestedFieldPathsAreAccepted() throws {
        #expect(
            try client.query(Micropost.self).where("user.userName", .eq, "al").path()
                == "/ff/resources/Micropost/(user.userName%20eq%20%27al%27)")
        #expect(try QueryCondition.field("_private_2", .gt, 0).text() == "_private_2 gt 0")
    }
}
