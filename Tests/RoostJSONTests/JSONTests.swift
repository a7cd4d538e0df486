import Testing

@testable import RoostJSON

@Suite("JSON parsing and writing")
struct JSONTests {
    @Test(
        "round-trips exactly",
        arguments: [
            #"{"a":1,"b":[true,false,null],"c":{"d":"e"}}"#,
            #"{"big":12345678901234567890,"small":-9007199254740993}"#,
            #"{"decimal":0.1000000000000000055511151231257827,"exp":1.5e-300,"neg":-0.0}"#,
            #"{"z":1,"a":2,"m":3}"#,
            #"["\u0000\n\"\\",[],{}]"#,
            #""snowman ☃ and emoji 🐦""#,
        ])
    func roundTrip(_ text: String) throws {
        let value = try JSONParser.parse(text)
        let written = JSONWriter.string(value)
        #expect(try JSONParser.parse(written) == value)
        if !text.contains("\\u0000") { #expect(written == text) }
    }

    @Test("numbers keep their literal text")
    func numbersAreExact() throws {
        // Literal text, not Double: this value is 2^53 + 1, which a Double cannot hold.
        let value = try JSONParser.parse(#"{"n":9007199254740993}"#)
        #expect(value.objectValue?["n"] == .number("9007199254740993"))
        #expect(value.objectValue?["n"]?.integerValue == 9_007_199_254_740_993)
    }

    @Test("escapes decode, including surrogate pairs")
    func escapes() throws {
        #expect(try JSONParser.parse(#""\u00e9\ud83d\udc26\t""#) == .string("é🐦\t"))
    }

    @Test(
        "malformed input names the byte where it failed",
        arguments: [
            ("", 0, "expected a JSON value but the input ended"),
            ("{", 1, "expected a string key"),
            (#"{"a" 1}"#, 5, "expected ':' after an object key"),
            (#"{"a":1,}"#, 7, "expected a string key"),
            ("[1 2]", 3, "expected ',' or ']'"),
            ("01", 0, "numbers may not have leading zeros"),
            ("1.", 2, "expected a digit after '.'"),
            (#""abc"#, 0, "unterminated string"),
            ("\"a\nb\"", 2, "control character in string; escape it"),
            (#""\x""#, 1, "invalid escape sequence"),
            (#""\ud800""#, 1, #"unpaired surrogate in \u escape"#),
            (#"{"a":1,"a":2}"#, 7, "duplicate key \"a\""),
            ("tru", 0, "invalid literal"),
            ("{} x", 3, "unexpected data after the JSON value"),
            ("nul", 0, "invalid literal"),
        ])
    func malformed(_ text: String, offset: Int, reason: String) {
        #expect(throws: JSONParseError(offset: offset, reason: reason)) { try JSONParser.parse(text) }
    }

    @Test("invalid UTF-8 in a string is refused")
    func invalidUTF8() {
        #expect(throws: JSONParseError(offset: 0, reason: "string is not valid UTF-8")) {
            try JSONParser.parse([0x22, 0xFF, 0xFE, 0x22])
        }
    }

    @Test("nesting is bounded, so hostile input cannot exhaust the stack")
    func depthLimit() throws {
        let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        #expect(throws: JSONParseError(offset: 512, reason: "nesting deeper than 512 levels")) {
            try JSONParser.parse(deep)
        }
        let allowed = String(repeating: "[", count: 512) + String(repeating: "]", count: 512)
        #expect(throws: Never.self) { try JSONParser.parse(allowed) }
    }

    @Test("object members keep order; setting nil removes")
    func objectEditing() {
        var object = JSONObject()
        object["b"] = .bool(true)
        object["a"] = .null
        object["b"] = .integer(2)
        #expect(object.keys == ["b", "a"])
        object["b"] = nil
        #expect(object.keys == ["a"])
    }

    /// Sizes on both sides of the index threshold, so scanning and the index are both exercised.
    static let sizes = [0, 1, JSONObject.indexThreshold, JSONObject.indexThreshold + 1, 200]

    @Test("lookups, replacements, appends and removals agree with the members", arguments: sizes)
    func objectIndex(size: Int) throws {
        let text = "{" + (0..<size).map { "\"k\($0)\":\($0)" }.joined(separator: ",") + "}"
        guard case .object(var object) = try JSONParser.parse(text) else { throw Failure() }
        #expect(object.count == size)
        for index in 0..<size { #expect(object["k\(index)"] == .integer(Int64(index))) }
        #expect(object["missing"] == nil)
        object["k0"] = .string("replaced")
        object["new"] = .bool(true)
        if size > 2 { object["k1"] = nil }
        var expected = (0..<size).map { "k\($0)" }.filter { size <= 2 || $0 != "k1" }
        if !expected.contains("k0") { expected.insert("k0", at: 0) }
        expected.append("new")
        #expect(object.keys == expected)
        #expect(object["k0"] == .string("replaced"))
        #expect(object["new"] == .bool(true))
        if size > 2 { #expect(object["k1"] == nil) }
        for (position, key) in expected.enumerated() {
            #expect(object[key] == object.members[position].value)
        }
        object.removeAll { key, _ in key.hasSuffix("0") }
        #expect(object.keys == expected.filter { !$0.hasSuffix("0") })
        for key in object.keys { #expect(object[key] != nil) }
        #expect(object["k10"] == nil)
        #expect(object == JSONObject(uniqueMembers: object.members))
    }

    @Test("duplicates are refused on both sides of the index threshold", arguments: sizes.dropFirst())
    func duplicatesInLargeObjects(size: Int) throws {
        let members = (0..<size).map { "\"k\($0)\":\($0)" }.joined(separator: ",")
        let text = "{" + members + ",\"k\(size - 1)\":0}"
        #expect(
            throws: JSONParseError(offset: members.utf8.count + 2, reason: "duplicate key \"k\(size - 1)\"")
        ) {
            try JSONParser.parse(text)
        }
    }

    @Test("keys compare as Swift strings: canonically equivalent spellings are one key")
    func canonicalEquivalence() throws {
        let composed = "\u{E9}"
        let decomposed = "e\u{301}"
        for padding in [0, JSONObject.indexThreshold] {
            let filler = (0..<padding).map { "\"f\($0)\":0," }.joined()
            #expect(throws: JSONParseError.self) {
                try JSONParser.parse("{\(filler)\"\(composed)\":1,\"\(decomposed)\":2}")
            }
            guard case .object(let object) = try JSONParser.parse("{\(filler)\"\(composed)\":1}") else {
                throw Failure()
            }
            #expect(object[decomposed] == .integer(1))
        }
    }
}

struct Failure: Error {}
