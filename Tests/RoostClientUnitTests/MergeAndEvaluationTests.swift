import Foundation
import Testing

@testable import RoostClient

/// The pure rules under offline reads and conflicts: merge patches, conflicts by field, and the
/// query evaluated on the device with the server's semantics.
@Suite struct MergeAndEvaluationTests {
    @Test func aPatchHoldsOnlyWhatChangedAndAppliesBack() {
        let base: [String: JSON] = [
            "text": "a", "done": false, "tags": ["x"], "address": ["city": "Oslo", "zip": "1"],
            "owner": ["ffUrl": "/ff/resources/FFUser/u1"], "gone": 1,
        ]
        var mine = base
        mine["done"] = true
        mine["address"] = ["city": "Oslo"]
        mine["owner"] = ["ffUrl": "/ff/resources/FFUser/u2"]
        mine["gone"] = nil
        mine["new"] = "n"
        let patch = MergePatch.diff(from: base, to: mine)
        #expect(
            patch == [
                "done": true, "address": ["zip": nil], "owner": ["ffUrl": "/ff/resources/FFUser/u2"],
                "gone": nil,
                "new": "n",
            ])
        #expect(MergePatch.apply(patch, to: base) == mine)
        #expect(MergePatch.paths(of: patch) == ["address.zip", "done", "gone", "new", "owner"])
        #expect(MergePatch.diff(from: base, to: base).isEmpty)
    }

    /// (what I changed, what they changed, the conflicting paths)
    static let conflictCases: [([String: JSON], [String: JSON], [String])] = [
        (["done": true], ["text": "renamed"], []),
        (["text": "mine"], ["text": "theirs"], ["text"]),
        (["text": "same"], ["text": "same"], []),
        (["address": ["city": "Bergen"]], ["address": ["zip": "2"]], []),
        (["address": ["city": "Bergen"]], ["address": nil], ["address.city"]),
        (["tags": ["a", "b"]], ["tags": ["c"]], ["tags"]),
    ]

    @Test(arguments: conflictCases)
    func conflictsAreFieldsBothSidesSetDifferently(
        mine: [String: JSON], theirs: [String: JSON], expected: [String]
    ) {
        let base: [String: JSON] = [
            "text": "a", "done": false, "address": ["city": "Oslo", "zip": "1"], "tags": [],
        ]
        #expect(MergePatch.conflicts(mine: mine, theirs: theirs, base: base) == expected)
    }

    @Test func insideAReadReferencesAreReducedToTheirURL() {
        let document: [String: JSON] = [
            "guid": "g", "version": 3, "text": "t",
            "user": ["ffUrl": "/ff/resources/FFUser/u1", "guid": "u1", "userName": "al"],
        ]
        #expect(
            MergePatch.appFields(of: document) == ["text": "t", "user": ["ffUrl": "/ff/resources/FFUser/u1"]])
    }

    static let document: [String: JSON] = [
        "guid": "g1", "ffUrl": "/ff/resources/Note/g1", "text": "O'Brien", "count": 3, "done": true,
        "tags": ["red", "blue"],
        "owner": ["ffUrl": "/ff/resources/FFUser/u1"], "nested": ["level": 2], "nothing": nil,
    ]

    static let evaluationCases: [(QueryCondition, Bool?)] = [
        (.field("text", .eq, "O'Brien"), true),
        (.field("count", .gt, 2), true),
        (.field("count", .lte, 2), false),
        (.field("count", .eq, "3"), false),
        (.field("done", .eq, true), true),
        (.field("missing", .eq, nil), true),
        (.field("nothing", .eq, nil), true),
        (.field("missing", .ne, 1), true),
        (.field("missing", .gt, 1), false),
        (.field("text", .lt, "a"), true),  // bytes: 'O' (79) before 'a' (97)
        (.field("nested.level", .gte, 2), true),
        (.field("tags", .containsAny, "green blue"), true),
        (.field("tags", .containsAll, "red green"), false),
        (.field("text", .matches, "^O'B"), true),
        (.field("owner", .eq, Ref<RoostUser>(guid: "u1")), true),
        (.field("owner", .eq, Ref<RoostUser>(guid: "u2")), false),
        (.field("owner.userName", .eq, "al"), nil),  // through a reference: only the server can tell
        (.field("guid", .eq, .randomGuid), nil),
        (.raw("count gt 1"), nil),
        (.field("count", .gt, 2) && !.field("done", .eq, false), true),
        (.field("count", .gt, 9) || .raw("x eq 1"), nil),
        (.field("count", .gt, 9) && .raw("x eq 1"), false),
    ]

    @Test(arguments: evaluationCases)
    func conditionsEvaluateOnTheDeviceAsOnTheServer(condition: QueryCondition, expected: Bool?) {
        #expect(condition.matches(Self.document) == expected, "\(condition)")
    }

    @Test func sortingOnTheDeviceFollowsTheKeys() {
        let documents: [[String: JSON]] = [
            ["guid": "1", "n": 2, "s": "b"], ["guid": "2", "n": 1, "s": "z"], ["guid": "3", "s": "a"],
            ["guid": "4", "n": 2, "s": "a"], ["guid": "5", "n": "x"], ["guid": "6", "n": true],
            ["guid": "7", "n": 2, "s": "a"],
        ]
        let sorted = LocalSort.sorted(documents, by: ["n desc", "s asc"]).map { $0["guid"]!.stringValue! }
        // Strings after numbers (true is 1), missing last when descending and first when ascending;
        // full ties by guid, in the last key's direction.
        #expect(sorted == ["5", "4", "7", "1", "6", "2", "3"])
    }
}
