import Foundation
import RoostTestSupport
import Testing

/// Seven celebrities with a spread of types, and one with fields missing.
let celebrities = [
    #"{"guid":"ada","name":"Ada Lovelace","gender":"female","born":1815,"tags":["math","poetry"],"bio":"countess of computing","alive":false,"address":{"city":"London"}}"#,
    #"{"guid":"alan","name":"Alan Turing","gender":"male","born":1912,"tags":["math","code"],"bio":"broke enigma","alive":false,"address":{"city":"London"}}"#,
    #"{"guid":"grace","name":"Grace Hopper","gender":"female","born":1906,"tags":["code","navy"],"bio":"wrote the first compiler","alive":false}"#,
    #"{"guid":"linus","name":"Linus Torvalds","gender":"male","born":1969,"tags":["code"],"bio":"kernel hacker","alive":true,"address":{"city":"Portland"}}"#,
    #"{"guid":"obrien","name":"Conan O'Brien","gender":"male","born":1963,"tags":["tv"],"bio":"late night","alive":true}"#,
    #"{"guid":"weird","name":"' or 1=1 --","gender":"other","born":"1900","tags":"math code"}"#,
    #"{"guid":"bare"}"#,
]

func makeCelebrityServer() async throws -> TestServer {
    let server = try await makeOpenServer()
    for celebrity in celebrities {
        let response = try await server.client.send("POST", "/ff/resources/Celebrity", json: celebrity)
        guard response.status == 201 else {
            throw TestClientError(description: "seed failed: \(response.text)")
        }
    }
    return server
}

func encodeQuery(_ query: String) -> String {
    var allowed = CharacterSet.urlPathAllowed
    allowed.remove(charactersIn: "?#%")
    return query.addingPercentEncoding(withAllowedCharacters: allowed)!
}

@Suite("Queries in the URL")
struct QueryAPITests {
    static let cases: [(String, [String])] = [
        ("(gender eq 'male')", ["alan", "linus", "obrien"]),
        ("(gender ne 'male')", ["ada", "grace", "weird", "bare"]),
        ("(born lt 1900)", ["ada"]),
        ("(born gte 1912)", ["alan", "linus", "obrien"]),
        ("(born eq 1900)", []),
        ("(born eq '1900')", ["weird"]),
        ("(born lt 'A')", ["weird"]),
        ("(alive eq true)", ["linus", "obrien"]),
        ("(alive eq false)", ["ada", "alan", "grace"]),
        ("(alive eq null)", ["weird", "bare"]),
        ("(alive ne null)", ["ada", "alan", "grace", "linus", "obrien"]),
        ("(name eq 'Conan O''Brien')", ["obrien"]),
        ("(name eq ''' or 1=1 --')", ["weird"]),
        ("(address.city eq 'London')", ["ada", "alan"]),
        ("(not address.city eq 'London')", ["grace", "linus", "obrien", "weird", "bare"]),
        ("(gender eq 'female' or born gt 1960)", ["ada", "grace", "linus", "obrien"]),
        ("((gender eq 'female' or born gt 1960) and not tags contains_any 'tv')", ["ada", "grace", "linus"]),
        ("(tags contains_any 'math navy')", ["ada", "alan", "grace", "weird"]),
        ("(tags contains_all 'math code')", ["alan", "weird"]),
        ("(name matches '^A')", ["ada", "alan"]),
        ("(bio matches 'comp(uting|iler)')", ["ada", "grace"]),
        ("(guid eq 'linus')", ["linus"]),
        ("(guid ne 'linus' and gender eq 'male')", ["alan", "obrien"]),
        (
            "(version eq 1 and createdBy eq null)",
            ["ada", "alan", "grace", "linus", "obrien", "weird", "bare"]
        ),
        ("(name eq 'Ada Lovelace' and name eq 'Alan Turing')", []),
    ]

    @Test("every operator, type mix and missing field", arguments: cases)
    func operators(_ query: String, _ expected: [String]) async throws {
        let server = try await makeCelebrityServer()
        let response = try await server.client.send("GET", "/ff/resources/Celebrity/" + encodeQuery(query))
        #expect(response.status == 200, "\(response.text)")
        let guids = (response.json["items"] as? [[String: Any]] ?? []).compactMap { $0["guid"] as? String }
        #expect(guids == expected)
        // Nothing a query does changes the data.
        #expect(
            try await server.client.send("GET", "/ff/resources/Celebrity?total=true").json["total"] as? Int
                == 7)
        await server.stop()
    }

    @Test("queries sort, page and count like lists")
    func pagingAndTotals() async throws {
        let server = try await makeCelebrityServer()
        let response = try await server.client.send(
            "GET",
            "/ff/resources/Celebrity/" + encodeQuery("(born gt 1800)")
                + "?sort=born%20desc&count=2&start=1&total=true")
        let guids = (response.json["items"] as? [[String: Any]] ?? []).compactMap { $0["guid"] as? String }
        #expect(guids == ["obrien", "alan"])
        #expect(response.json["total"] as? Int == 5)
        await server.stop()
    }

    @Test("a query holding '/' in a string works, percent-encoded or not")
    func slashInQuery() async throws {
        let server = try await makeOpenServer()
        _ = try await server.client.send(
            "POST", "/ff/resources/Link", json: #"{"url":"http://example.com/a b+c"}"#)
        for path in [
            "/ff/resources/Link/(url%20eq%20'http://example.com/a%20b+c')",
            "/ff/resources/Link/(url%20eq%20'http:%2F%2Fexample.com%2Fa%20b+c')",
        ] {
            let response = try await server.client.send("GET", path)
            #expect((response.json["items"] as? [Any])?.count == 1, "\(path): \(response.text)")
        }
        await server.stop()
    }

    static let badQueries: [(String, String, Int)] = [
        ("(gender eq)", "expected a value after 'eq' at column 11", 11),
        ("(name eq 'x", "unterminated string starting at column 10; close it with ' at column 10", 10),
        (
            "(a eq 1) or", "expected a field name, 'not' or '(' but found the end of the query at column 12",
            12
        ),
        ("(a lt true)", "lt compares numbers or strings, not true, false or null", 1),
        ("(a matches '(')", "'(' is not a valid regular expression", 1),
        ("(name eq ''); DROP TABLE objects; --')", "unexpected character ';' at column 13", 13),
        (
            "(a eq 1 or guid eq random(guid))",
            "random(guid) can only be and-ed with the rest of the query, once, as in (gender eq 'male' and guid eq random(guid))",
            1
        ),
    ]

    @Test(
        "a bad query is a 400 invalid_query with the column, and the database is untouched",
        arguments: badQueries)
    func badQuery(_ query: String, _ message: String, _ column: Int) async throws {
        let server = try await makeCelebrityServer()
        let response = try await server.client.send("GET", "/ff/resources/Celebrity/" + encodeQuery(query))
        #expect(response.status == 400)
        #expect(response.json["code"] as? String == "invalid_query")
        #expect(response.json["message"] as? String == message)
        let details = response.json["details"] as? [String: Any] ?? [:]
        #expect(details["column"] as? Int == column)
        #expect(details["query"] as? String == query)
        #expect(
            try await server.client.send("GET", "/ff/resources/Celebrity?total=true").json["total"] as? Int
                == 7)
        await server.stop()
    }

    @Test("random(guid) picks a matching object, never an excluded one, and empty is not an error")
    func randomPick() async throws {
        let server = try await makeCelebrityServer()
        var seen = Set<String>()
        for _ in 0..<60 {
            let response = try await server.client.send(
                "GET",
                "/ff/resources/Celebrity/"
                    + encodeQuery("(gender eq 'male' and guid ne 'alan' and guid eq random(guid))"))
            let items = response.json["items"] as? [[String: Any]] ?? []
            #expect(items.count == 1)
            if let guid = items.first?["guid"] as? String { seen.insert(guid) }
        }
        #expect(seen == ["linus", "obrien"])
        let none = try await server.client.send(
            "GET", "/ff/resources/Celebrity/" + encodeQuery("(gender eq 'robot' and guid eq random(guid))"))
        #expect(none.status == 200)
        #expect(none.text == #"{"items":[]}"#)
        let empty = try await server.client.send(
            "GET", "/ff/resources/Nobody/" + encodeQuery("(guid eq random(guid))"))
        #expect(empty.text == #"{"items":[]}"#)
        await server.stop()
    }
}
