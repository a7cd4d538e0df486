import RoostScriptProtocol
import Testing

@Suite("JSON nesting read without parsing")
struct JSONNestingTests {
    @Test("brackets count outside strings only, escaped quotes included")
    func depths() {
        let cases: [(String, Int)] = [
            ("1", 0), ("[]", 1), (#"{"a":[1,{"b":[]}]}"#, 4), (#"["[[[[", "\"]]]"]"#, 1),
            (#"{"k\\":"[","v":[[]]}"#, 3),
            (String(repeating: "[", count: 600) + String(repeating: "]", count: 600), 600),
        ]
        for (text, depth) in cases {
            #expect(JSONNesting.depth(of: Array(text.utf8)) == depth, "\(text.prefix(40))")
        }
    }
}
