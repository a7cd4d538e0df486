import Foundation
import RoostQuery
import Testing

@testable import RoostStore

/// The chi-square statistic of observed counts against a uniform expectation.
func chiSquare(_ counts: [String: Int], categories: Int, draws: Int) -> Double {
    let expected = Double(draws) / Double(categories)
    var statistic = Double(categories - counts.count) * expected
    for count in counts.values { statistic += pow(Double(count) - expected, 2) / expected }
    return statistic
}

@Suite("random(guid)")
struct RandomPickTests {
    /// 49 degrees of freedom: the statistic exceeds 85.35 with probability 0.001.
    static let criticalValue = 85.35

    @Test("10,000 draws over 50 matching objects are uniform, and excluded guids never come back")
    func uniformWhenDense() async throws {
        let store = try SQLiteObjectStore(directory: temporaryDirectory())
        for index in 0..<60 {
            let kind = index < 51 ? "match" : "other"
            try await store.insert(
                object("Thing", "t\(index)", document: #"{"guid":"t\#(index)","kind":"\#(kind)"}"#))
        }
        let filter = QueryExpression.and([
            .comparison(FieldPath("kind")!, .eq, .string("match")),
            .comparison(FieldPath("guid")!, .ne, .string("t7")),
        ])
        var counts: [String: Int] = [:]
        for _ in 0..<10_000 {
            let document = try #require(try await store.randomObject(in: "Thing", matching: filter))
            let json = try JSONSerialization.jsonObject(with: Data(document)) as? [String: Any]
            counts[try #require(json?["guid"] as? String), default: 0] += 1
        }
        #expect(counts["t7"] == nil)
        #expect(counts.keys.allSatisfy { Int($0.dropFirst())! < 51 })
        #expect(chiSquare(counts, categories: 50, draws: 10_000) < Self.criticalValue)
    }

    @Test("a selective filter falls back to counting and stays uniform")
    func uniformWhenSparse() async throws {
        let store = try SQLiteObjectStore(directory: temporaryDirectory())
        for index in 0..<2000 {
            try await store.insert(
                object("Thing", "t\(index)", document: #"{"guid":"t\#(index)","rare":\#(index % 40 == 0)}"#))
        }
        let filter = QueryExpression.comparison(FieldPath("rare")!, .eq, .bool(true))
        var counts: [String: Int] = [:]
        for _ in 0..<5000 {
            let document = try #require(try await store.randomObject(in: "Thing", matching: filter))
            let json = try JSONSerialization.jsonObject(with: Data(document)) as? [String: Any]
            counts[try #require(json?["guid"] as? String), default: 0] += 1
        }
        #expect(counts.count == 50)
        #expect(counts.keys.allSatisfy { Int($0.dropFirst())! % 40 == 0 })
        #expect(chiSquare(counts, categories: 50, draws: 5000) < Self.criticalValue)
        #expect(
            try await store.randomObject(
                in: "Thing", matching: .comparison(FieldPath("rare")!, .eq, .string("no"))) == nil)
        #expect(try await store.randomObject(in: "Empty", matching: nil) == nil)
    }

    @Test("an equality on an indexed field uses the index")
    func indexUse() async throws {
        let store = try SQLiteObjectStore(directory: temporaryDirectory())
        let index = try await store.createIndex(collection: "Post", field: FieldPath("gender")!)
        #expect(try await store.fieldIndexes() == [index])
        let condition = try SQLiteObjectStore.condition(
            "Post", .comparison(FieldPath("gender")!, .eq, .string("male")))
        let plan = try store.database.read { connection in
            try connection.query("EXPLAIN QUERY PLAN SELECT document FROM objects WHERE \(condition)") {
                $0.text(3) ?? ""
            }
        }
        #expect(plan.joined().contains("USING INDEX field:Post:gender"), "\(plan)")
        let range = try SQLiteObjectStore.condition(
            "Post", .comparison(FieldPath("gender")!, .gte, .string("m")))
        let rangePlan = try store.database.read { connection in
            try connection.query("EXPLAIN QUERY PLAN SELECT document FROM objects WHERE \(range)") {
                $0.text(3) ?? ""
            }
        }
        #expect(rangePlan.joined().contains("USING INDEX field:Post:gender"), "\(rangePlan)")
        #expect(try await store.dropIndex(collection: "Post", field: FieldPath("gender")!))
        #expect(try await store.fieldIndexes().isEmpty)
    }
}

@Suite("Query compiler output")
struct QueryCompilerTests {
    @Test(
        "golden SQL: values bound, paths inline, type checks only where needed",
        arguments: [
            (
                QueryExpression.comparison(FieldPath("gender")!, .eq, .string("male")),
                "(json_extract(document, '$.gender') IS ?)", [DatabaseValue.text("male")]
            ),
            (
                .comparison(FieldPath("born")!, .lt, .number("1900")),
                "(json_extract(document, '$.born') < ? AND (json_type(document, '$.born') IS 'integer' OR json_type(document, '$.born') IS 'real'))",
                [.integer(1900)]
            ),
            (
                .comparison(FieldPath("n")!, .eq, .number("1")),
                "(json_extract(document, '$.n') = ? AND (json_type(document, '$.n') IS 'integer' OR json_type(document, '$.n') IS 'real'))",
                [.integer(1)]
            ),
            (
                .comparison(FieldPath("x")!, .eq, .null),
                "(json_type(document, '$.x') IS NULL OR json_type(document, '$.x') IS 'null')", []
            ),
            (
                .comparison(FieldPath("guid")!, .ne, .string("a' OR 1=1")), "(NOT (guid = ?))",
                [.text("a' OR 1=1")]
            ),
            (.comparison(FieldPath("version")!, .gte, .number("2")), "(version >= ?)", [.integer(2)]),
        ])
    func golden(_ expression: QueryExpression, _ text: String, _ arguments: [DatabaseValue]) throws {
        let sql = try SQLiteQueryCompiler.condition(expression)
        #expect(sql.text == text)
        #expect(sql.arguments == arguments)
    }
}
