import RoostQuery
import RoostStore
import Testing

@testable import RoostPostgres

/// ICU patterns rewritten for PostgreSQL, and those refused rather than answered differently.
@Suite("Regular expressions for PostgreSQL")
struct PostgresStoreRegexTests {
    @Test(
        "ICU's dot, dollar, word boundaries and escapes become their PostgreSQL equivalents",
        arguments: [
            ("^a.c$", #"^a[^\n\r\u0085\u2028\u2029]c(?=(?:\r\n|[\n\r\u0085\u2028\u2029])?$)"#),
            ("(?s)a.c", "a(?:.|\\n)c"),
            ("(?i)\\bword\\b", "(?i)\\yword\\y"),
            ("\\Aab\\z", "\\Aab\\Z"),
            ("\\x41\\u00e9\\x{1F426}", "\\U00000041\\U000000e9\\U0001f426"),
            ("[^a-c\\]]", "[^a-c\\]]"),
            ("(?:a|b)+?(?=c)(?<!d)\\d{2,3}", "(?:a|b)+?(?=c)(?<!d)\\d{2,3}"),
            ("(?#comment)a", "a"),
        ])
    func translations(_ pattern: String, _ expected: String) throws {
        #expect(try PostgresRegex.translate(pattern) == expected)
    }

    @Test(
        "what PostgreSQL cannot run is refused with a clear error",
        arguments: [
            "\\p{L}", "a++", "(?>a)", "(?<name>a)", "a(?i)b", "[[a]]", "[a&&b]", "a{300}", "\\Qa\\E", "\\R",
        ])
    func refusals(_ pattern: String) {
        #expect(throws: QueryError.self) { try PostgresRegex.translate(pattern) }
        let compiled = try? PostgresQueryCompiler.condition(.matches(FieldPath("f")!, pattern))
        #expect(compiled == nil)
    }

    @Test("a pattern PostgreSQL refuses only when it runs is a query error, not a server error")
    func refusedAtRun() async throws {
        try await withPostgresStorage { storage in
            try await storage.objects.insert(object("Post", "a", document: #"{"guid":"a","t":"aa"}"#))
            let request = ListRequest(
                collection: "Post", filter: .matches(FieldPath("t")!, "\\1(a)"), includeTotal: true)
            await #expect(throws: QueryError.self) { try await storage.objects.list(request) }
            await #expect(throws: QueryError.self) { try await storage.objects.randomPick(request) }
        }
    }
}
