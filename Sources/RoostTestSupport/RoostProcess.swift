import Foundation

/// The real `roost` binary running as a child process, for tests that kill or signal it.
public final class RoostProcess: @unchecked Sendable {
    // @unchecked Sendable: the Process is only started, signalled and waited on.
    public let process: Process
    public let port: Int

    /// Starts `roost serve` on a free port with the given data folder and waits until it listens.
    public init(dataDirectory: String, arguments: [String] = []) throws {
        process = Process()
        process.executableURL = URL(fileURLWithPath: try Self.binaryPath())
        process.arguments =
            ["serve", "--port", "0", "--data-dir", dataDirectory, "--access-log", "off"] + arguments
        let output = Pipe()
        process.standardOutput = output
        // Not the test runner's own stderr: a child that outlives a crashed test run would keep
        // that pipe open and leave 'swift test' waiting forever.
        let logPath = dataDirectory + ".log"
        FileManager.default.createFile(atPath: logPath, contents: nil)
        process.standardError = FileHandle(forWritingAtPath: logPath)
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

    /// A test that fails before stopping its server must not leave it running.
    deinit {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
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
    public static func binaryPath() throws -> String {
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

/// What a finished `roost` command printed.
public struct CommandResult: Sendable {
    public let status: Int32
    public let output: String
    public let errorOutput: String
}

/// Runs `roost` with arguments and standard input, and waits for it to exit.
public func runRoost(_ arguments: [String], input: String = "") async throws -> CommandResult {
    let binary = try RoostProcess.binaryPath()
    return try await offCooperativePool {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = arguments
        let stdin = Pipe()
        let stdout = Pipe()
        let stderr = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = stderr
        try process.run()
        stdin.fileHandleForWriting.write(Data(input.utf8))
        try stdin.fileHandleForWriting.close()
        let output = stdout.fileHandleForReading.readDataToEndOfFile()
        let errorOutput = stderr.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return CommandResult(
            status: process.terminationStatus, output: String(decoding: output, as: UTF8.self),
            errorOutput: String(decoding: errorOutput, as: UTF8.self))
    }
}
