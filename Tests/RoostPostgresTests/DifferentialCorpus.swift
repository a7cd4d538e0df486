import Foundation
import RoostQuery
import RoostStore

/// Documents and seeded queries for the differential test: odd numbers, unicode, nesting,
/// arrays, nulls, booleans and missing fields, compared with every operator.
enum DifferentialCorpus {
    static let rounds = 1500
    /// The seed of documents and queries; `ROOST_DIFFERENTIAL_SEED` (hex) explores others.
    static let seed =
        ProcessInfo.processInfo.environment["ROOST_DIFFERENTIAL_SEED"].flatMap {
            UInt64($0, radix: 16)
        } ?? 0

    /// JSON values as written in documents.
    static let values: [String] = [
        "0", "-0", "1", "-1", "2", "1.0", "1.5", "-2.5", "1e2", "1E2", "100", "0.1", "0.30000000000000004",
        "0.3",
        "1e400", "-1e400", "1e-400", "9007199254740993", "9007199254740992", "12345678901234567890",
        "1.00000000000000001", "true", "false", "null", #""""#, #""a""#, #""B""#, #""b""#, #""é""#,
        #""e\u0301""#,
        #""\u00e9t\u00e9""#, #""🐦""#, #""Z""#, #""abc""#, #""a b c""#, #""red blue""#, #""O'Brien""#,
        #""10""#,
        #""1""#, #""true""#, #""line\nbreak""#, #""break\n""#, #""AAa\n""#, #""tab\tand \"quote\"""#, #""{""#,
        #""[1]""#, #""a\u0000b""#,
        "[]", #"["red","green"]"#, #"["blue",1,true,null,["red"]]"#, #"["red","red","blue"]"#, #"{"x":1}"#,
        #"{"y":"a"}"#, "[1,2]", #"["10","a b"]"#,
    ]

    static let strings = [
        "", "a", "B", "b", "é", "e\u{301}", "🐦", "Z", "abc", "a b c", "O''Brien", "10", "1", "true", "{",
        "[1]",
        "red", "blue", "line", "ab",
    ]
    static let numbers = [
        "0", "-0", "1", "-1", "2", "1.0", "1.5", "-2.5", "1e2", "100", "0.1", "0.3", "1e400", "-1e400",
        "9007199254740992", "9007199254740993", "12345678901234567890", "3",
    ]
    static let patterns = [
        "^a", "b$", "\\d", ".", "^$", "[a-c]", "é", "(?i)^a", "a|B", "^.{3}$", "\\bred\\b", "[^a]", "o''B",
        "^[0-9]+$", "\\s", "x*", "(ab)+", "k$", "^line.break$", "(?s)^line.break$", "\\Aline", "e\\z",
        "a\\Z", "\\x41|\\u00e9", "[\\d]", "(?=a)a", "(?<!a)b", "a{2,3}", "(?i)É", "\\.", "\\w+ \\w+",
    ]
    static let fields = [
        "n", "s", "b", "tags", "obj.x", "obj.x.y", "ref.name", "ref.n", "missing", "guid", "createdAt",
        "version",
        "createdBy", "ffACL.readUsers",
    ]
    /// Fields without arrays or objects: those sort by their text as written in SQLite, which
    /// jsonb no longer has (a documented difference).
    static let sortFields = ["n", "s", "b", "ref.name", "missing", "guid", "createdAt", "createdBy"]

    /// 90 objects in `Thing` and a few in `Other` they refer to.
    static func objects() -> [StoredObject] {
        var generator = SeededGenerator(seed: seed ^ 0xD0C5)
        var objects: [StoredObject] = []
        for index in 0..<5 {
            let name = ["alice", "Bob", "é", "", "zed"][index]
            objects.append(
                object(
                    "Other", "o\(index)", createdAt: Int64(index), createdBy: index % 2 == 0 ? "u1" : nil,
                    document: #"{"guid":"o\#(index)","name":"\#(name)","n":\#(values[index * 3])}"#))
        }
        for index in 0..<90 {
            let guid = "t" + (index < 10 ? "0" : "") + String(index)
            var members = [#""guid":"\#(guid)""#]
            func maybe(_ key: String, _ value: @autoclosure () -> String) {
                if Int.random(in: 0..<6, using: &generator) > 0 { members.append(#""\#(key)":\#(value())"#) }
            }
            maybe("n", values.randomElement(using: &generator)!)
            maybe("s", values.randomElement(using: &generator)!)
            maybe("b", ["true", "false", "null", "1", #""true""#].randomElement(using: &generator)!)
            maybe("tags", values.randomElement(using: &generator)!)
            maybe("obj", #"{"x":\#(values.randomElement(using: &generator)!)}"#)
            maybe("ref", #"{"ffUrl":"/ff/resources/Other/o\#(Int.random(in: 0..<6, using: &generator))"}"#)
            members.shuffle(using: &generator)
            let acl = Int.random(in: 0..<3, using: &generator) == 0 ? #"{"readUsers":["u1"]}"# : nil
            objects.append(
                object(
                    "Thing", guid, createdAt: Int64(Int.random(in: 0..<30, using: &generator)),
                    createdBy: ["u1", "u2", nil].randomElement(using: &generator)!,
                    document: "{" + members.joined(separator: ",") + "}", acl: acl))
        }
        return objects
    }

    /// One query: a random tree of predicates, sometimes mutated like the parser's fuzz test.
    static func query(using generator: inout SeededGenerator, mutate: Bool) -> String {
        var text = expression(depth: 0, using: &generator)
        if mutate {
            var characters = Array(text)
            let alphabet = Array("()' .eqandornotlgt0123456789_abxyz")
            for _ in 0..<Int.random(in: 1...2, using: &generator) {
                let position = Int.random(in: 0..<characters.count, using: &generator)
                characters[position] = alphabet.randomElement(using: &generator)!
            }
            text = String(characters)
        }
        return text
    }

    private static func expression(depth: Int, using generator: inout SeededGenerator) -> String {
        let choice = Int.random(in: 0..<(depth < 2 ? 10 : 7), using: &generator)
        switch choice {
        case 7, 8:
            let parts = (0..<Int.random(in: 2...3, using: &generator)).map { _ in
                expression(depth: depth + 1, using: &generator)
            }
            return "(" + parts.joined(separator: choice == 7 ? " and " : " or ") + ")"
        case 9:
            return "(not " + expression(depth: depth + 1, using: &generator) + ")"
        default:
            return "(" + predicate(using: &generator) + ")"
        }
    }

    private static func predicate(using generator: inout SeededGenerator) -> String {
        let field = fields.randomElement(using: &generator)!
        switch Int.random(in: 0..<12, using: &generator) {
        case 0:
            return "\(field) matches '\(patterns.randomElement(using: &generator)!)'"
        case 1:
            let words = (0..<Int.random(in: 1...3, using: &generator)).map { _ in
                ["red", "blue", "green", "a", "b", "10", "1", "true", "[1]"].randomElement(using: &generator)!
            }
            return
                "\(field) \(Bool.random(using: &generator) ? "contains_any" : "contains_all") '\(words.joined(separator: " "))'"
        case 2:
            return
                "\(field) \(["eq", "ne"].randomElement(using: &generator)!) \(["true", "false", "null"].randomElement(using: &generator)!)"
        default:
            let comparison = ComparisonOperator.allCases.randomElement(using: &generator)!.rawValue
            let literal =
                Bool.random(using: &generator)
                ? numbers.randomElement(using: &generator)!
                : "'" + strings.randomElement(using: &generator)! + "'"
            return "\(field) \(comparison) \(literal)"
        }
    }

    static func sort(using generator: inout SeededGenerator) -> [SortKey] {
        (0..<Int.random(in: 0...2, using: &generator)).map { _ in
            SortKey(
                field: FieldPath(sortFields.randomElement(using: &generator)!)!,
                descending: Bool.random(using: &generator))
        }
    }
}
