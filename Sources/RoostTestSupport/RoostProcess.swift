import Foundation

/// The real `roost` binary running as a child process, for tests that kill or signal it.
public final class RoostProcess: @unchecked Sendable {
    // @unchecked Sendable: the Process is only started, signalled and waited on.
    public let process: Process
    public let port: Int

    /// Starts `roost serve` on a free port with the given data folder and waits until it listens.
    public init(dataDirectory: String) throws {
        process = Process()
        process.executableURL = URL(fileURLWithPath: try Self.binaryPath())
        process.arguments = ["serve", "--port", "0", "--data-dir", dataDirectory, "--access-log", "off"]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.standardError
        try process.run()
        var text = ""
        let reader = output.fileHandleForReading
        while !text.contains("\n") {
            let chunk = reader.availableData
            if chunk.isEmpty { throw TestClientError(description: "roost exited before listening: \(text)") }
            text += String(decoding: chunk, as: UTF8.self)
        }
        guard let range = text.range(of: #"http://[^:]+:(\d+)"#, options: .regularExpression),
            let port = Int(text[range].split(separator: ":").last ?? "")
        else { throw TestClientError(description: "unexpected first line: \(text)") }
        self.port = port
    }

    /// Sends a signal and waits for the process to end; returns its exit status.
    @discardableResult
    public func stop(signal: Int32) async throws -> Int32 {
        kill(process.processIdentifier, signal)
        let process = self.process
        return try await offCooperativePool {
            process.waitUntilExit()
            return process.terminationStatus
        }
    }

    /// The `roost` binary built beside the test bundle, or `ROOST_BINARY`.
    static func binaryPath() throws -> String {
        if let path = ProcessInfo.processInfo.environment["ROOST_BINARY"] { return path }
        let testBinary = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        var folder = testBinary.deletingLastPathComponent()
        for _ in 0..<4 {
            let candidate = folder.appendingPathComponent("roost").path
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
            folder = folder.deletingLastPathComponent()
        }
        throw TestClientError(
            description:
                "cannot find the roost binary near \(testBinary.path); run 'swift build' first or set ROOST_BINARY"
        )
    }
}
