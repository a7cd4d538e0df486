import Foundation
import RoostQuery
import Testing

@testable import RoostSQLite
@testable import RoostStore

@Suite("random(guid)")
struct RandomPickTests {
    // Uniformity, dense and sparse, runs on both backends in
    // Tests/RoostPostgresTests/PostgresStoreTests.swift.

    @Test("an equality on an indexed field uses the index")
    func indexUse() async throws {
        let store = try SQLiteObjectStore(directory: temporaryDirectory(), collections: .builtIn)
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
