import Foundation
import RoostCore
import RoostPostgres
import RoostSQLite
import RoostStore
import RoostTestSupport
import Testing

/// The two backends the store tests run on.
enum Backend: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case sqlite, postgres
    var testDescription: String { rawValue }
}

/// Runs `body` with every store on a fresh PostgreSQL database (dropped afterwards).
@discardableResult
func withPostgresStorage<T>(_ body: (PostgresStorage) async throws -> T) async throws -> T {
    try await PostgresTestDatabase.with { test in
        let storage = try PostgresStorage(configuration: test.configuration, collections: .builtIn)
        do {
            let result = try await body(storage)
            await storage.close()
            return result
        } catch {
            await storage.close()
            throw error
        }
    }
}

/// Runs `body` with every store of `backend`, fresh.
@discardableResult
func withStorage<T>(_ backend: Backend, _ body: (any Storage) async throws -> T) async throws -> T {
    switch backend {
    case .postgres:
        return try await withPostgresStorage { try await body($0) }
    case .sqlite:
        let directory = NSTemporaryDirectory() + "roost-pg-store-test-" + UUID().uuidString
        let storage = try SQLiteStorage(directory: directory, collections: .builtIn)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        do {
            let result = try await body(storage)
            await storage.close()
            return result
        } catch {
            await storage.close()
            throw error
        }
    }
}

/// An object with a document, as the SQLite store tests make them.
func object(
    _ collection: String, _ guid: String, createdAt: Int64 = 1, createdBy: String? = nil,
    document: String? = nil,
    acl: String? = nil
) -> StoredObject {
    StoredObject(
        collection: collection, guid: guid, document: Array((document ?? #"{"guid":"\#(guid)"}"#).utf8),
        createdBy: createdBy, createdAt: createdAt, updatedBy: createdBy, updatedAt: createdAt, version: 1,
        acl: acl.map { Array($0.utf8) })
}

/// The `guid` member of a document (the tests write it first or among the members as `"guid":"…"`).
func guid(of document: [UInt8]) -> String {
    let text = String(decoding: document, as: UTF8.self)
    guard let start = text.range(of: #""guid":""#) else { return "?" }
    return String(text[start.upperBound...].prefix { $0 != "\"" })
}

/// The store error kind `body` threw, or nil when it threw something else or nothing.
func storeError(_ body: () async throws -> Void) async -> StoreError.Kind? {
    do {
        try await body()
        return nil
    } catch let error as StoreError {
        return error.kind
    } catch {
        return nil
    }
}

/// The chi-square statistic of observed counts against a uniform expectation.
func chiSquare(_ counts: [String: Int], categories: Int, draws: Int) -> Double {
    let expected = Double(draws) / Double(categories)
    var statistic = Double(categories - counts.count) * expected
    for count in counts.values { statistic += pow(Double(count) - expected, 2) / expected }
    return statistic
}

/// A small deterministic generator, as the query parser's fuzz test uses, so runs repeat.
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
