import Foundation
import RoostStore
import RoostTestSupport
import Testing

@testable import RoostPostgres

/// Round trips through the pool, with and without prepared statements. Prints numbers and
/// asserts none: runs only with ROOST_MEASURE_DRIVER=1.
@Suite(.enabled(if: ProcessInfo.processInfo.environment["ROOST_MEASURE_DRIVER"] == "1"))
struct DriverMeasurementTests {
    @Test(arguments: [true, false])
    func roundTrips(preparing: Bool) async throws {
        try await withTestDatabase({
            $0.poolSize = 2
            $0.preparesStatements = preparing
        }) { database, _ in
            try await database.write { connection in
                try connection.execute(
                    """
                    CREATE TABLE objects (id bigserial PRIMARY KEY, collection text NOT NULL, guid text NOT NULL,
                      document text NOT NULL, UNIQUE (collection, guid));
                    INSERT INTO objects (collection, guid, document)
                      SELECT 'posts', 'g' || n, '{"n":' || n || '}' FROM generate_series(1, 10000) n;
                    ANALYZE objects;
                    """)
            }
            let rounds = 2000
            func time(_ label: String, _ body: () async throws -> Void) async rethrows {
                try await body()  // warm up: connect, prepare
                let start = ContinuousClock.now
                for _ in 0..<5 { try await body() }
                let each = (ContinuousClock.now - start) / (5 * rounds)
                print("measure preparing=\(preparing) \(label): \(each) per statement")
            }
            try await time("SELECT 1 through the pool (one job each)") {
                for _ in 0..<rounds {
                    _ = try await database.read { try $0.first("SELECT 1") { $0.integer(0) } }
                }
            }
            try await time("GET by guid through the pool (one job each)") {
                for n in 0..<rounds {
                    _ = try await database.read {
                        try $0.first(
                            "SELECT document FROM objects WHERE collection = \("posts") AND guid = \("g\(n % 10000 + 1)")"
                        ) {
                            $0.bytes(0)
                        }
                    }
                }
            }
            try await time("GET by guid inside one job (libpq round trips only)") {
                _ = try await database.read { connection in
                    for n in 0..<rounds {
                        _ = try connection.first(
                            "SELECT document FROM objects WHERE collection = \("posts") AND guid = \("g\(n % 10000 + 1)")"
                        ) { $0.bytes(0) }
                    }
                }
            }
        }
    }
}
