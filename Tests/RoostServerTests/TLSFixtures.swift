import Foundation
import RoostTestSupport
import Testing

/// Python's `ssl` module as a client that verifies the server against the test CA: each command
/// prints one JSON object (see the script below).
func pythonTLS(_ arguments: String...) async throws -> [String: Any] {
    let result = try await runProgram("/usr/bin/python3", ["-W", "ignore", pythonTLSClientPath] + arguments)
    let object = try JSONSerialization.jsonObject(with: Data(result.output.utf8))
    return try #require(object as? [String: Any], "python printed \(result.output) \(result.errorOutput)")
}

/// Beside this file; run from the source tree like the rest of the tests.
private let pythonTLSClientPath = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .appendingPathComponent("tls_client.py").path
