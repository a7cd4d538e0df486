import Foundation
import RoostPostgres
import RoostStore
import RoostTestSupport
import Testing

/// Runs `body` with a pool on a fresh database (dropped afterwards); `adjust` changes the pool's
/// settings first.
@discardableResult
func withTestDatabase<T>(
    migrations: [Migration] = [], _ adjust: (inout PostgresConfiguration) -> Void = { _ in },
    _ body: (PostgresDatabase, PostgresTestDatabase) async throws -> T
) async throws -> T {
    try await PostgresTestDatabase.with { test in
        var configuration = test.configuration
        adjust(&configuration)
        let database = try PostgresDatabase(configuration: configuration, migrations: migrations)
        do {
            let result = try await body(database, test)
            await database.close()
            return result
        } catch {
            await database.close()
            throw error
        }
    }
}

/// Waits (polling) until `condition` holds; fails the test after `attempts` tries.
func waitUntil(
    _ what: String, attempts: Int = 600, sourceLocation: SourceLocation = #_sourceLocation,
    _ condition: () async throws -> Bool
) async throws {
    for _ in 0..<attempts {
        if try await condition() { return }
        try await Task.sleep(for: .milliseconds(50))
    }
    Issue.record("never happened: \(what)", sourceLocation: sourceLocation)
    throw CancellationError()
}

/// The store error kind `body` threw, or nil when it threw something else or nothing.
func storeErrorKind(_ body: () async throws -> Void) async -> StoreError.Kind? {
    do {
        try await body()
        return nil
    } catch let error as StoreError {
        return error.kind
    } catch {
        return nil
    }
}

/// scripts/postgres-test-cluster.sh in this checkout, run with `arguments`; its standard output.
/// Spawned with only its standard descriptors, so the server it starts does not hold the pipe open.
@discardableResult
func runClusterScript(_ arguments: [String]) throws -> String {
    let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("scripts/postgres-test-cluster.sh")
    let output = try ChildProcess.makePipe()
    let child = try ChildProcess("/bin/bash", [script.path] + arguments, output: output.write, error: 2)
    close(output.write)
    let data = readAll(output.read)
    close(output.read)
    let status = child.waitForExit()
    guard status == 0 else { throw ClusterScriptFailed(arguments: arguments, status: status) }
    return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
}

struct ClusterScriptFailed: Error {
    let arguments: [String]
    let status: Int32
}
