import Foundation
import RoostTestSupport
import Testing

/// A Python program of Tests/browser that drives headless Chromium through selenium, run with
/// the interpreter of `.build/browser-venv` (scripts/install-deps.sh --browser-tests) when there
/// is one. The program prints one JSON object; exit status 3 means Chromium or selenium is missing.
enum BrowserScript {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// The path of a file of the repository.
    static func path(_ relative: String) -> String { root.appendingPathComponent(relative).path }

    /// What `Tests/browser/<name>` printed, or nil (with the reason printed) when the browser or
    /// selenium is missing; a failed run fails the test.
    static func run(_ name: String, _ arguments: [String]) async throws -> [String: Any]? {
        let venvPython = path(".build/browser-venv/bin/python3")
        let python =
            FileManager.default.isExecutableFile(atPath: venvPython)
            ? [venvPython] : ["/usr/bin/env", "python3"]
        let result = try await runProgram(
            python[0], Array(python.dropFirst()) + [path("Tests/browser/" + name)] + arguments)
        if result.status == 3 {
            print(
                "skipping the browser test: \(result.output.trimmingCharacters(in: .whitespacesAndNewlines))")
            return nil
        }
        #expect(result.status == 0, "\(result.errorOutput)")
        return try #require(
            JSONSerialization.jsonObject(with: Data(result.output.utf8)) as? [String: Any], "\(result.output)"
        )
    }
}
