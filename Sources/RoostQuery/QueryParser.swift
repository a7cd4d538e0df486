/// Parses FatFractal's query language, as in `(gender eq 'male' and guid eq random(guid))`.
///
/// The grammar, loosest binding first:
///
///     query      := expression
///     expression := conjunction ('or' conjunction)*
///     conjunction:= unary ('and' unary)*
///     unary      := 'not' unary | '(' expression ')' | predicate
///     predicate  := path ('eq'|'ne'|'lt'|'lte'|'gt'|'gte') value
///                 | path 'matches' string | path ('contains_any'|'contains_all') string
///     value      := string | number | 'true' | 'false' | 'null' | 'random' '(' 'guid' ')'
///
/// Strings use single quotes, with `''` for a quote inside. Errors carry the 1-based column.
///
/// Rules (``parseRule(_:)``) add `public`, `loggedIn` and `none` as conditions, and `@user.guid`,
/// `@user.groups` and `@request.body.path` on either side of a predicate; they have no `random`.
public struct QueryParser {
    /// The longest query accepted, in characters.
    public static let maximumLength = 4096
    /// How deep parentheses and `not` may nest.
    public static let maximumDepth = 64

    /// Parses a whole query.
    public static func parse(_ text: String) throws(QueryError) -> QueryExpression {
        var parser = QueryParser(text: text, isRule: false)
        // A query has no variables or principals, so it always lowers.
        guard let query = try parser.parseQuery().queryExpression else {
            throw parser.fail("the query names a principal", at: 0, expected: [])
        }
        return query
    }

    /// Parses an access rule: a query that may also use `public`, `loggedIn`, `none` and the
    /// variables `@user.guid`, `@user.groups` and `@request.body.field`.
    public static func parseRule(_ text: String) throws(QueryError) -> RuleExpression {
        var parser = QueryParser(text: text, isRule: true)
        return try parser.parseQuery()
    }

    private enum Token: Equatable {
        case open, close, word(String), variable(String), string(String), number(String), end
    }

    private let text: String
    private let scalars: [Unicode.Scalar]
    /// Whether principals and `@` variables are allowed, and `random(guid)` is not.
    private let isRule: Bool
    private var index = 0
    private var tokenStart = 0
    private var depth = 0

    private init(text: String, isRule: Bool) {
        self.text = text
        self.isRule = isRule
        scalars = Array(text.unicodeScalars)
    }

    private static let principals: [String: RuleExpression] = [
        "public": .constant(true), "none": .constant(false), "loggedIn": .loggedIn,
    ]

    private mutating func parseQuery() throws(QueryError) -> RuleExpression {
        guard scalars.count <= Self.maximumLength else {
            throw fail(
                "the query is longer than \(Self.maximumLength) characters", at: Self.maximumLength + 1,
                expected: [])
        }
        skipSpaces()
        guard index < scalars.count else {
            throw fail(
                "the query is empty; write a condition such as (gender eq 'male')", at: 0,
                expected: ["a condition"])
        }
        let expression = try parseExpression()
        let (token, start) = try next()
        guard token == .end else {
            throw fail(
                "unexpected \(describe(token)) after the end of the query", at: start,
                expected: ["and", "or", "end of query"])
        }
        return expression
    }

    private mutating func parseExpression() throws(QueryError) -> RuleExpression {
        var parts = [try parseConjunction()]
        while try peekWord("or") {
            _ = try next()
            parts.append(try parseConjunction())
        }
        return parts.count == 1 ? parts[0] : .or(parts)
    }

    private mutating func parseConjunction() throws(QueryError) -> RuleExpression {
        var parts = [try parseUnary()]
        while try peekWord("and") {
            _ = try next()
            parts.append(try parseUnary())
        }
        return parts.count == 1 ? parts[0] : .and(parts)
    }

    private mutating func parseUnary() throws(QueryError) -> RuleExpression {
        let (token, start) = try next()
        switch token {
        case .word("not"):
            try enter(at: start)
            defer { depth -= 1 }
            return .not(try parseUnary())
        case .open:
            try enter(at: start)
            defer { depth -= 1 }
            let inner = try parseExpression()
            let (closing, closingStart) = try next()
            guard closing == .close else {
                throw fail(
                    "expected ')' to close the '(' at column \(start + 1)", at: closingStart, expected: [")"])
            }
            return inner
        case .word(let name):
            if isRule, let principal = Self.principals[name], !(try peekOperator()) { return principal }
            guard let path = FieldPath(name) else {
                throw fail(
                    "'\(name)' is not a field name: use letters, digits and '_', with '.' between parts",
                    at: start, expected: ["field name"])
            }
            return try parsePredicate(left: .field(path), name: name)
        case .variable(let name):
            return try parsePredicate(left: .variable(try variable(name, at: start)), name: "@" + name)
        default:
            let expected =
                isRule ? ["public", "loggedIn", "none", "a field name", "@user.guid"] : ["a field name"]
            throw fail(
                "expected \(expected.joined(separator: ", ")), 'not' or '(' but found \(describe(token))",
                at: start, expected: ["field name", "not", "("])
        }
    }

    private func variable(_ name: String, at start: Int) throws(QueryError) -> RuleVariable {
        guard let variable = RuleVariable(name) else {
            throw fail(
                "unknown variable '@\(name)'; use @user.guid, @user.groups or @request.body.field", at: start,
                expected: ["@user.guid", "@user.groups", "@request.body.field"])
        }
        return variable
    }

    private static let operators =
        ComparisonOperator.allCases.map(\.rawValue) + ["matches", "contains_any", "contains_all"]

    private mutating func peekOperator() throws(QueryError) -> Bool {
        if case .word(let word) = try peek() { return Self.operators.contains(word) }
        return false
    }

    private mutating func parsePredicate(left: RuleOperand, name: String) throws(QueryError)
        -> RuleExpression
    {
        let operators = Self.operators
        let (token, operatorStart) = try next()
        guard case .word(let word) = token, operators.contains(word) else {
            throw fail(
                "expected an operator (\(operators.joined(separator: ", "))) after '\(name)' but found \(describe(token))",
                at: operatorStart, expected: operators)
        }
        let (value, valueStart) = try next()
        switch (word, value) {
        case ("matches", .string(let pattern)):
            return .matches(left, pattern)
        case ("contains_any", .variable(let name)), ("contains_all", .variable(let name)):
            return .contains(
                left, ContainsMode(rawValue: word)!, .variable(try variable(name, at: valueStart)))
        case ("contains_any", .string(let words)), ("contains_all", .string(let words)):
            let list = words.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
            guard !list.isEmpty, list.count <= 100 else {
                throw fail(
                    "\(word) takes 1 to 100 words in one string, such as 'red blue'", at: valueStart,
                    expected: ["string"])
            }
            return .contains(left, ContainsMode(rawValue: word)!, .words(list))
        case ("matches", _), ("contains_any", _), ("contains_all", _):
            throw fail(
                "expected a string after '\(word)' but found \(describe(value))", at: valueStart,
                expected: ["string"])
        default:
            break
        }
        let comparison = ComparisonOperator(rawValue: word)!
        switch value {
        case .string(let string): return .comparison(left, comparison, .literal(.string(string)))
        case .number(let number): return .comparison(left, comparison, .literal(.number(number)))
        case .word("true"): return .comparison(left, comparison, .literal(.bool(true)))
        case .word("false"): return .comparison(left, comparison, .literal(.bool(false)))
        case .word("null"): return .comparison(left, comparison, .literal(.null))
        case .variable(let name):
            return .comparison(left, comparison, .variable(try variable(name, at: valueStart)))
        case .word("random") where !isRule:
            try expectRandomArguments()
            guard left == .field(FieldPath("guid")!), comparison == .eq else {
                throw fail(
                    "random(guid) is only compared with guid, as in 'guid eq random(guid)'", at: valueStart,
                    expected: [])
            }
            return .randomPick
        case .word(let other):
            if case .open = try peek() {
                throw fail(
                    "unknown function '\(other)'; the only function is random(guid)", at: valueStart,
                    expected: ["random(guid)"])
            }
            throw fail(
                "expected a value after '\(word)' but found '\(other)'; quote strings, as in '\(other)'",
                at: valueStart, expected: Self.valueKinds)
        default:
            throw fail("expected a value after '\(word)'", at: valueStart, expected: Self.valueKinds)
        }
    }

    private static let valueKinds = ["string", "number", "true", "false", "null", "random(guid)"]

    private mutating func expectRandomArguments() throws(QueryError) {
        for expected in [Token.open, .word("guid"), .close] {
            let (token, start) = try next()
            guard token == expected else {
                throw fail(
                    "random takes one argument, guid: write random(guid)", at: start,
                    expected: ["random(guid)"])
            }
        }
    }

    private mutating func enter(at start: Int) throws(QueryError) {
        depth += 1
        if depth > Self.maximumDepth {
            throw fail("the query nests deeper than \(Self.maximumDepth) levels", at: start, expected: [])
        }
    }

    private mutating func peekWord(_ word: String) throws(QueryError) -> Bool {
        try peek() == .word(word)
    }

    private mutating func peek() throws(QueryError) -> Token {
        let saved = index
        defer { index = saved }
        return try next().0
    }

    /// The next token and its 0-based start.
    private mutating func next() throws(QueryError) -> (Token, Int) {
        skipSpaces()
        let start = index
        guard index < scalars.count else { return (.end, start) }
        let scalar = scalars[index]
        switch scalar {
        case "(":
            index += 1
            return (.open, start)
        case ")":
            index += 1
            return (.close, start)
        case "'":
            return (.string(try readString(start: start)), start)
        case "@" where isRule:
            index += 1
            while index < scalars.count, Self.isWordScalar(scalars[index]) || scalars[index] == "." {
                index += 1
            }
            return (.variable(String(String.UnicodeScalarView(scalars[(start + 1)..<index]))), start)
        case "-", "0"..."9":
            return (.number(try readNumber(start: start)), start)
        default:
            guard Self.isWordScalar(scalar) else {
                throw fail("unexpected character '\(scalar)'", at: start, expected: [])
            }
            while index < scalars.count, Self.isWordScalar(scalars[index]) || scalars[index] == "." {
                index += 1
            }
            return (.word(String(String.UnicodeScalarView(scalars[start..<index]))), start)
        }
    }

    private mutating func readString(start: Int) throws(QueryError) -> String {
        index += 1
        var result = String.UnicodeScalarView()
        while index < scalars.count {
            if scalars[index] == "'" {
                if index + 1 < scalars.count, scalars[index + 1] == "'" {
                    result.append("'")
                    index += 2
                    continue
                }
                index += 1
                return String(result)
            }
            result.append(scalars[index])
            index += 1
        }
        throw fail(
            "unterminated string starting at column \(start + 1); close it with '", at: start, expected: ["'"]
        )
    }

    private mutating func readNumber(start: Int) throws(QueryError) -> String {
        if scalars[index] == "-" { index += 1 }
        let digitsStart = index
        while index < scalars.count, ("0"..."9").contains(scalars[index]) { index += 1 }
        var valid = index > digitsStart && !(scalars[digitsStart] == "0" && index - digitsStart > 1)
        if valid, index < scalars.count, scalars[index] == "." {
            index += 1
            let fraction = index
            while index < scalars.count, ("0"..."9").contains(scalars[index]) { index += 1 }
            valid = index > fraction
        }
        if valid, index < scalars.count, scalars[index] == "e" || scalars[index] == "E" {
            index += 1
            if index < scalars.count, scalars[index] == "+" || scalars[index] == "-" { index += 1 }
            let exponent = index
            while index < scalars.count, ("0"..."9").contains(scalars[index]) { index += 1 }
            valid = index > exponent
        }
        if valid, index < scalars.count, Self.isWordScalar(scalars[index]) { valid = false }
        guard valid else { throw fail("invalid number", at: start, expected: ["number"]) }
        return String(String.UnicodeScalarView(scalars[start..<index]))
    }

    private mutating func skipSpaces() {
        while index < scalars.count,
            scalars[index] == " " || scalars[index] == "\t" || scalars[index] == "\n"
                || scalars[index] == "\r"
        {
            index += 1
        }
    }

    private static func isWordScalar(_ scalar: Unicode.Scalar) -> Bool {
        ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar) || ("0"..."9").contains(scalar)
            || scalar == "_"
    }

    private func describe(_ token: Token) -> String {
        switch token {
        case .open: "'('"
        case .close: "')'"
        case .word(let word): "'\(word)'"
        case .variable(let name): "'@\(name)'"
        case .string: "a string"
        case .number(let number): "the number \(number)"
        case .end: "the end of the query"
        }
    }

    fileprivate func fail(_ message: String, at offset: Int, expected: [String]) -> QueryError {
        let column = min(offset, scalars.count) + 1
        return QueryError(
            message: "\(message) at column \(column)", column: column, query: text, expected: expected)
    }
}
