import Testing

@testable import RoostQuery

func path(_ text: String) -> FieldPath { FieldPath(text)! }

@Suite("Query language parser")
struct QueryParserTests {
    @Test(
        "parses to the expected tree",
        arguments: [
            ("(gender eq 'male')", QueryExpression.comparison(path("gender"), .eq, .string("male"))),
            ("gender eq 'male'", .comparison(path("gender"), .eq, .string("male"))),
            ("(name eq 'O''Brien')", .comparison(path("name"), .eq, .string("O'Brien"))),
            (
                "(age gte 21 and age lt 65.5)",
                .and([
                    .comparison(path("age"), .gte, .number("21")),
                    .comparison(path("age"), .lt, .number("65.5")),
                ])
            ),
            (
                "(a eq 1 or b eq 2 and c eq 3)",
                .or([
                    .comparison(path("a"), .eq, .number("1")),
                    .and([
                        .comparison(path("b"), .eq, .number("2")), .comparison(path("c"), .eq, .number("3")),
                    ]),
                ])
            ),
            (
                "((a eq 1 or b eq 2) and c eq 3)",
                .and([
                    .or([
                        .comparison(path("a"), .eq, .number("1")), .comparison(path("b"), .eq, .number("2")),
                    ]), .comparison(path("c"), .eq, .number("3")),
                ])
            ),
            ("(not done eq true)", .not(.comparison(path("done"), .eq, .bool(true)))),
            ("(deleted eq null)", .comparison(path("deleted"), .eq, .null)),
            ("(x ne false)", .comparison(path("x"), .ne, .bool(false))),
            ("(n eq -1.5e3)", .comparison(path("n"), .eq, .number("-1.5e3"))),
            (
                "(author.address.city eq 'Oslo')",
                .comparison(path("author.address.city"), .eq, .string("Oslo"))
            ),
            ("(name matches '^A.*e$')", .matches(path("name"), "^A.*e$")),
            ("(tags contains_any 'red  blue')", .contains(path("tags"), .any, ["red", "blue"])),
            ("(tags contains_all 'red')", .contains(path("tags"), .all, ["red"])),
            (
                "(gender eq 'male' and guid ne 'X' and guid eq random(guid))",
                .and([
                    .comparison(path("gender"), .eq, .string("male")),
                    .comparison(path("guid"), .ne, .string("X")), .randomPick,
                ])
            ),
            ("( guid  eq  random( guid ) )", .randomPick),
            ("(emoji eq '🐦 ☃')", .comparison(path("emoji"), .eq, .string("🐦 ☃"))),
            ("(s eq '\u{0}')", .comparison(path("s"), .eq, .string("\u{0}"))),
        ])
    func parses(_ text: String, _ expected: QueryExpression) throws {
        #expect(try QueryParser.parse(text) == expected)
    }

    @Test(
        "errors say what was expected, at which column",
        arguments: [
            ("(gender eq)", "expected a value after 'eq' at column 11", 11),
            ("", "the query is empty; write a condition such as (gender eq 'male') at column 1", 1),
            ("(gender eq 'male'", "expected ')' to close the '(' at column 1 at column 18", 18),
            ("(name eq 'abc)", "unterminated string starting at column 10; close it with ' at column 10", 10),
            ("(a eq 1) b", "unexpected 'b' after the end of the query at column 10", 10),
            ("(a eq foo(1))", "unknown function 'foo'; the only function is random(guid) at column 7", 7),
            (
                "(a eq male)",
                "expected a value after 'eq' but found 'male'; quote strings, as in 'male' at column 7", 7
            ),
            (
                "(a is 1)",
                "expected an operator (eq, ne, lt, lte, gt, gte, matches, contains_any, contains_all) after 'a' but found 'is' at column 4",
                4
            ),
            ("(a eq 01)", "invalid number at column 7", 7),
            ("(a eq 1 and)", "expected a field name, 'not' or '(' but found ')' at column 12", 12),
            (
                "(a..b eq 1)",
                "'a..b' is not a field name: use letters, digits and '_', with '.' between parts at column 2",
                2
            ),
            ("(a eq random(x))", "random takes one argument, guid: write random(guid) at column 14", 14),
            (
                "(name eq random(guid))",
                "random(guid) is only compared with guid, as in 'guid eq random(guid)' at column 10", 10
            ),
            ("(a matches 3)", "expected a string after 'matches' but found the number 3 at column 12", 12),
            ("(a eq 1; drop table objects)", "unexpected character ';' at column 8", 8),
        ])
    func errors(_ text: String, _ message: String, _ column: Int) {
        #expect(
            throws: QueryError(message: message, column: column, query: text, expected: errorExpected(text))
        ) {
            try QueryParser.parse(text)
        }
    }

    func errorExpected(_ text: String) -> [String] {
        do {
            _ = try QueryParser.parse(text)
            return []
        } catch {
            return error.expected
        }
    }

    @Test("nesting is bounded")
    func depth() throws {
        let allowed = String(repeating: "(", count: 64) + "a eq 1" + String(repeating: ")", count: 64)
        #expect(throws: Never.self) { try QueryParser.parse(allowed) }
        let deep = String(repeating: "(", count: 10_000) + "a eq 1" + String(repeating: ")", count: 10_000)
        #expect(throws: QueryError.self) { try QueryParser.parse(deep) }
        let nots = "(" + String(repeating: "not ", count: 100) + "a eq 1)"
        #expect(throws: QueryError.self) { try QueryParser.parse(nots) }
    }

    @Test("random(guid) only as a top-level conjunct")
    func randomPlacement() throws {
        let plan = try QueryPlan(QueryParser.parse("(gender eq 'male' and guid eq random(guid))"))
        #expect(plan.pickRandom)
        #expect(plan.filter == .comparison(path("gender"), .eq, .string("male")))
        #expect(try QueryPlan(QueryParser.parse("(guid eq random(guid))")).pickRandom)
        #expect(try QueryPlan(QueryParser.parse("(guid eq random(guid))")).filter == nil)
        #expect(throws: QueryError.self) {
            try QueryPlan(QueryParser.parse("(a eq 1 or guid eq random(guid))"))
        }
        #expect(throws: QueryError.self) { try QueryPlan(QueryParser.parse("(not guid eq random(guid))")) }
        #expect(throws: QueryError.self) {
            try QueryPlan(QueryParser.parse("(guid eq random(guid) and guid eq random(guid))"))
        }
    }

    @Test("100,000 random and mutated queries never crash, and every error points inside the input")
    func fuzz() {
        var generator = SeededGenerator(seed: 0x5EED)
        let seeds = [
            "(gender eq 'male' and guid ne 'X' and guid eq random(guid))",
            "(a eq 1 or (b lt 2.5 and not c eq null))",
            "(name eq 'O''Brien')", "(tags contains_any 'a b' and x matches '^z')", "(author.name gte 'M')",
        ]
        let alphabet: [Character] = Array("()' .-eqandornotlgt0123456789_abcxyzrandom(guid)\u{0}é🐦\"\\;")
        var parsed = 0
        for round in 0..<100_000 {
            var characters = Array(seeds[round % seeds.count])
            for _ in 0..<Int.random(in: 1...6, using: &generator) {
                let position = Int.random(in: 0...characters.count, using: &generator)
                switch Int.random(in: 0..<3, using: &generator) {
                case 0: characters.insert(alphabet.randomElement(using: &generator)!, at: position)
                case 1: if position < characters.count { characters.remove(at: position) }
                default:
                    if position < characters.count {
                        characters[position] = alphabet.randomElement(using: &generator)!
                    }
                }
            }
            let text = String(characters)
            do {
                _ = try QueryParser.parse(text)
                parsed += 1
            } catch {
                let length = text.unicodeScalars.count
                if error.column < 1 || error.column > length + 1 {
                    Issue.record("column \(error.column) outside \(text.debugDescription)")
                    return
                }
            }
        }
        #expect(parsed > 0)
    }
}

/// A small deterministic generator, so the fuzz run is repeatable.
struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
