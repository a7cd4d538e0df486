import Foundation
import RoostCore
import RoostServer
import RoostTestSupport
import Synchronization
import Testing

/// A clock that starts at a known instant and moves 1 ms per reading.
final class SteppingClock: WallClock {
    private let now = Atomic<Int64>(1_790_000_000_000)
    func nowMilliseconds() -> Int64 { now.add(1, ordering: .relaxed).newValue }
}

/// Guids g0001, g0002, ...
final class SequentialGuids: GuidGenerator {
    private let next = Atomic<Int>(0)
    func makeGuid() -> String { String(format: "g%04d", next.add(1, ordering: .relaxed).newValue) }
}

/// Rules that let anyone write, for tests about objects rather than permissions.
let openRules = try! AppDefinition.parse(
    Array(#"{"collections":{"*":{"rules":{"create":"public","update":"public","delete":"public"}}}}"#.utf8))

/// A definition file with ``openRules``, for `roost serve --app`.
func writeOpenDefinition(beside directory: String) throws -> String {
    let path = directory + "-app.json"
    try Data(#"{"collections":{"*":{"rules":{"create":"public","update":"public","delete":"public"}}}}"#.utf8)
        .write(to: URL(fileURLWithPath: path))
    return path
}

/// A server whose rules let anonymous callers write.
func makeOpenServer(dataDirectory: String? = nil) async throws -> TestServer {
    try await TestServer(dataDirectory: dataDirectory) { $0.appDefinition = openRules }
}

/// A server with predictable guids and timestamps, so tests can compare whole bodies.
func makePredictableServer(maxBody: Int = 10 * 1024 * 1024) async throws -> TestServer {
    try await TestServer { configuration in
        configuration.appDefinition = openRules
        configuration.clock = SteppingClock()
        configuration.guids = SequentialGuids()
        configuration.maxBodyBytes = maxBody
    }
}

