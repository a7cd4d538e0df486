import Foundation
import Synchronization

/// The real `roost` binary running as a child process, for tests that kill or signal it.
public final class RoostProcess: Sendable {
    public let process: ChildProcess
    public let port: Int
    /// What the server printed first (the line naming its address), without the newline.
    public let firstLine: String
    /// Kept open: the server prints to standard output later, and a closed pipe would kill it.
    private let output: FileHandle

    /// Starts `roost serve` on a free port with the given data folder and waits until it listens.
    /// `launcher` runs first with the command as its arguments (`prlimit --nofile=…`, say).
    public init(dataDirectory: String, arguments: [String] = [], launcher: [String] = []) throws {
        // Not the test runner's own stderr: a child that outlives a crashed test run would keep
        // that pipe open and leave 'swift test' waiting forever.
        let logPath = dataDirectory + ".log"
        let log = open(logPath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        defer { close(log) }
        let output = try ChildProcess.makePipe()
        do {
            let command =
                [
                    try Self.binaryPath(), "serve", "--port", "0", "--data-dir", dataDirectory,
                    "--access-log", "off",
                    // Tests register their users from 127.0.0.1; `arguments` may set a lower limit.
                    "--max-registrations", String(testRegistrationsPerAddress),
                ]
                + TestBackend.databaseArguments(for: dataDirectory) + arguments
            let whole = launcher + command
            process = try ChildProcess(whole[0], Array(whole.dropFirst()), output: output.write, error: log)
            close(output.write)
        } catch {
            close(output.read)
            close(output.write)
            throw error
        }
        let reader = FileHandle(fileDescriptor: output.read, closeOnDealloc: true)
        self.output = reader
        var text = ""
        while !text.contains("\n") {
            let chunk = reader.availableData
            if chunk.isEmpty { throw TestClientError(description: "roost exited before listening: \(text)") }
            text += String(decoding: chunk, as: UTF8.self)
        }
        guard let range = text.range(of: #"https?://[^:]+:(\d+)"#, options: .regularExpression),
            let port = Int(text[range].split(separator: ":").last ?? "")
        else { throw TestClientError(description: "unexpected first line: \(text)") }
        self.port = port
        firstLine = String(text.prefix { $0 != "\n" })
    }

    /// Sends a signal and waits for the process to end; returns its exit status.
    @discardableResult
    public func stop(signal: Int32) async throws -> Int32 {
        process.signal(signal)
        return try await process.exit()
    }

    /// The `roost` binary built beside the test bundle, or `ROOST_BINARY`.
    public static func binaryPath() throws -> String {
        if let path = ProcessInfo.processInfo.environment["ROOST_BINARY"] { return path }
        return try productPath("roost")
    }

    /// An executable of this package built beside the test bundle.
    public static func productPath(_ name: String) throws -> String {
        let testBinary = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        var folder = testBinary.deletingLastPathComponent()
        for _ in 0..<4 {
            let candidate = folder.appendingPathComponent(name).path
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
            folder = folder.deletingLastPathComponent()
        }
        throw TestClientError(
            description: "cannot find the \(name) binary near \(testBinary.path); run 'swift build' first")
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
    var arguments = arguments
    // The commands that work on a server's database work on PostgreSQL's when the tests run there.
    if let command = arguments.first, TestBackend.commandsTakingDatabase.contains(command),
        let flag = arguments.firstIndex(of: "--data-dir"), flag + 1 < arguments.count
    {
        arguments += TestBackend.databaseArguments(for: arguments[flag + 1])
    }
    return try await runProgram(try RoostProcess.binaryPath(), arguments, input: input)
}

/// Runs a program with arguments and standard input, and waits for it to exit.
public func runProgram(_ path: String, _ arguments: [String], input: String = "") async throws
    -> CommandResult
{
    try await offCooperativePool {
        let stdin = try ChildProcess.makePipe()
        let stdout = try ChildProcess.makePipe()
        let stderr = try ChildProcess.makePipe()
        let child: ChildProcess
        do {
            child = try ChildProcess(
                path, arguments, input: stdin.read, output: stdout.write, error: stderr.write)
        } catch {
            for descriptor in [stdin.read, stdin.write, stdout.read, stdout.write, stderr.read, stderr.write]
            {
                close(descriptor)
            }
            throw error
        }
        close(stdin.read)
        close(stdout.write)
        close(stderr.write)
        let writer = FileHandle(fileDescriptor: stdin.write, closeOnDealloc: true)
        // A child that exits before reading its input (a refused command) must not kill the test
        // process with SIGPIPE, which is ignored only once a server has started in it.
        signal(SIGPIPE, SIG_IGN)
        try? writer.write(contentsOf: Data(input.utf8))
        try writer.close()
        // Standard error is read on another thread so a chatty child never blocks on a full pipe.
        let errorOutput = Mutex(Data())
        let errorDone = DispatchSemaphore(value: 0)
        Thread {
            let data = readAll(stderr.read)
            errorOutput.withLock { $0 = data }
            errorDone.signal()
        }.start()
        let output = readAll(stdout.read)
        errorDone.wait()
        let status = child.waitForExit()
        return CommandResult(
            status: status, output: String(decoding: output, as: UTF8.self),
            errorOutput: String(decoding: errorOutput.withLock { $0 }, as: UTF8.self))
    }
}
