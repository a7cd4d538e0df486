import Foundation
import RoostStore
import RoostTestSupport
import Testing

@testable import RoostPostgres

@Suite("PostgreSQL driver: values and statements")
struct DriverBindingTests {
    @Test func everyValueTypeRoundTripsAsABoundParameter() async throws {
        let odd = "quote ' double \" question ? dollar $1 backslash \\ tab\t newline\n é 🎉 \u{7F}"
        let bytes: [UInt8] = [0, 1, 0, 255, 0x5c, 0x78, 0]
        try await withTestDatabase { database, _ in
            try await database.write { connection in
                try connection.execute(
                    "CREATE TABLE t (i bigint, r double precision, s text, b bytea, n text)")
                for (position, number) in [Int64.max, Int64.min, 0].enumerated() {
                    let real: Double = [1e308, -0.5, .infinity][position]
                    try connection.run(
                        "INSERT INTO t (i, r, s, b, n) VALUES (\(number), \(DatabaseValue.real(real)), \(odd), \(bytes), \(DatabaseValue.null))"
                    )
                }
            }
            let rows = try await database.read { connection in
                try connection.query("SELECT i, r, s, b, n FROM t ORDER BY i") { row in
                    (row.integer(0), row.double(1), row.text(2), row.bytes(3), row.isNull(4), row.text(4))
                }
            }
            #expect(rows.map(\.0) == [Int64.min, 0, Int64.max])
            #expect(rows.map(\.1) == [-0.5, .infinity, 1e308])
            #expect(rows.allSatisfy { $0.2 == odd && $0.3 == bytes && $0.4 && $0.5 == nil })
        }
    }

    @Test func rowAccessorsReadEachType() async throws {
        try await withTestDatabase { database, _ in
            let row = try await database.read { connection in
                try connection.first(
                    "SELECT true, false, 7::int2, 8::int4, 12.0::numeric, 2.5::float8, 'abc'::text, NULL::bytea, NULL::bigint"
                ) { row in
                    (
                        row.bool(0), row.bool(1), row.integer(0), row.integer(2), row.integer(3),
                        row.integer(4),
                        row.double(5), row.bytes(6), row.bytes(7), row.integer(8)
                    )
                }
            }
            let values = try #require(row)
            #expect(values.0 && !values.1 && values.2 == 1)
            #expect(values.3 == 7 && values.4 == 8 && values.5 == 12)
            #expect(values.6 == 2.5 && values.7 == Array("abc".utf8) && values.8 == [] && values.9 == 0)
        }
    }

    @Test func aQuestionMarkInsideQuotesIsNotAParameter() async throws {
        #expect(
            PostgresConnection.numberingPlaceholders("SELECT '?', \"a?\", ? -- what?\n, ?, 'it''s ?'")
                == ("SELECT '?', \"a?\", $1 -- what?\n, $2, 'it''s ?'", 2))
        try await withTestDatabase { database, _ in
            let row = try await database.read { connection in
                try connection.first("SELECT '?' AS \"q?\", \(Int64(42)) AS v, 'it''s ?' AS w") {
                    ($0.text(0), $0.integer(1), $0.text(2))
                }
            }
            #expect(row?.0 == "?" && row?.1 == 42 && row?.2 == "it's ?")
        }
    }

    @Test func aPlaceholderCountThatDoesNotMatchTheValuesIsRefused() async throws {
        try await withTestDatabase { database, _ in
            await #expect(throws: PostgresError.self) {
                try await database.read { try $0.run(SQL(stringLiteral: "SELECT ?")) }
            }
        }
    }

    @Test func aRepeatedStatementIsPreparedAndGivesTheSameAnswers() async throws {
        try await withTestDatabase({ $0.poolSize = 1 }) { database, _ in
            let answers = try await database.read { connection in
                try (0..<5).map { number in
                    try connection.first("SELECT \(Int64(number)) + 1") { $0.integer(0) }
                }
            }
            #expect(answers == [1, 2, 3, 4, 5])
            let prepared = try await database.read { connection in
                try connection.first("SELECT count(*) FROM pg_prepared_statements") { $0.integer(0) }
            }
            #expect(prepared == 1)
        }
    }

    @Test func aDuplicateKeyIsAUniqueViolation() async throws {
        try await withTestDatabase { database, _ in
            try await database.write { try $0.execute("CREATE TABLE u (k text PRIMARY KEY)") }
            _ = try await database.write { try $0.run("INSERT INTO u VALUES (\("secret-value"))") }
            do {
                _ = try await database.write { try $0.run("INSERT INTO u VALUES (\("secret-value"))") }
                Issue.record("the second insert succeeded")
            } catch let error as PostgresError {
                #expect(error.isUniqueViolation && error.sqlState == "23505")
                #expect(!error.description.contains("secret-value"))
            }
        }
    }

    @Test func aWriteThatThrowsIsRolledBack() async throws {
        struct Refused: Error {}
        try await withTestDatabase { database, _ in
            try await database.write { try $0.execute("CREATE TABLE w (k bigint)") }
            await #expect(throws: Refused.self) {
                try await database.write { connection in
                    try connection.run("INSERT INTO w VALUES (\(Int64(1)))")
                    throw Refused()
                }
            }
            let count = try await database.snapshotRead {
                try $0.first("SELECT count(*) FROM w") { $0.integer(0) }
            }
            #expect(count == 0)
        }
    }

    @Test func aSnapshotReadIsReadOnly() async throws {
        try await withTestDatabase { database, _ in
            try await database.write { try $0.execute("CREATE TABLE s (k bigint)") }
            do {
                _ = try await database.snapshotRead { try $0.run("INSERT INTO s VALUES (\(Int64(1)))") }
                Issue.record("a snapshot read wrote")
            } catch let error as PostgresError {
                #expect(error.sqlState == "25006")
            }
        }
    }
}
