import Foundation
import RoostClient

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// What every example takes: the server, the folder for its state, a command and its arguments.
public struct ExampleCommand: Sendable {
    /// The Roost server (`--server`, or `ROOST_SERVER`, or http://127.0.0.1:8080).
    public let server: URL
    /// Where the token, queue and cache live (`--state`).
    public let state: String
    /// The command word.
    public let name: String
    /// Positional arguments after the command.
    public let arguments: [String]
    /// `--name value` options other than the common ones.
    public let options: [String: String]

    /// Reads the command line; prints `usage` and exits on `--help` or a malformed line.
    public static func parse(program: String, usage: String) -> ExampleCommand {
        var arguments = Array(CommandLine.arguments.dropFirst())
        if arguments.isEmpty || arguments.contains("--help") || arguments.contains("-h") {
            print(usage)
            exit(arguments.isEmpty ? 64 : 0)
        }
        var options: [String: String] = [:]
        var positional: [String] = []
        while !arguments.isEmpty {
            let argument = arguments.removeFirst()
            if argument.hasPrefix("--") {
                guard !arguments.isEmpty else { fail("\(argument) needs a value", usage: usage) }
                options[String(argument.dropFirst(2))] = arguments.removeFirst()
            } else {
                positional.append(argument)
            }
        }
        let address =
            options.removeValue(forKey: "server") ?? ProcessInfo.processInfo.environment["ROOST_SERVER"]
            ?? "http://127.0.0.1:8080"
        guard let server = URL(string: address), server.scheme != nil else {
            fail("'\(address)' is not a server URL such as http://127.0.0.1:8080", usage: usage)
        }
        let state =
            options.removeValue(forKey: "state") ?? FileManager.default.currentDirectoryPath + "/.\(program)"
        return ExampleCommand(
            server: server, state: state, name: positional[0], arguments: Array(positional.dropFirst()),
            options: options)
    }

    /// The positional argument at `index`, or a usage error naming it.
    public func argument(_ index: Int, _ name: String) throws -> String {
        guard index < arguments.count else { throw UsageError(message: "\(self.name) needs \(name)") }
        return arguments[index]
    }

    /// A client keeping its state in ``state``; writes are sent by the command, not in the
    /// background, since the process ends when the command does.
    public func makeClient(configure: (inout RoostConfiguration) -> Void = { _ in }) throws -> Roost {
        var configuration = RoostConfiguration(
            serverURL: server, storageFolder: state,
            credentialStore: FileCredentialStore(path: state + "/credential.json"), requestTimeout: 10)
        configuration.deliversInBackground = false
        configure(&configuration)
        return try Roost(configuration: configuration)
    }

    static func fail(_ message: String, usage: String) -> Never {
        FileHandle.standardError.write(Data("error: \(message)\n\n\(usage)\n".utf8))
        exit(64)
    }
}

/// A command line the example cannot act on.
public struct UsageError: Error {
    public let message: String

    public init(message: String) {
        self.message = message
    }
}

/// Reads a password from standard input, without echo when it is a terminal: passwords never go
/// on the command line, where `ps` would show them.
public func readPassword(prompt: String = "Password: ") -> String {
    let interactive = isatty(STDIN_FILENO) == 1
    var saved = termios()
    if interactive {
        FileHandle.standardError.write(Data(prompt.utf8))
        tcgetattr(STDIN_FILENO, &saved)
        var silent = saved
        silent.c_lflag &= ~tcflag_t(ECHO)
        tcsetattr(STDIN_FILENO, TCSANOW, &silent)
    }
    let line = readLine(strippingNewline: true) ?? ""
    if interactive {
        tcsetattr(STDIN_FILENO, TCSANOW, &saved)
        FileHandle.standardError.write(Data("\n".utf8))
    }
    return line
}

/// Runs an example's command: a Roost error is printed with its code (exit 1), a usage error
/// with the usage (exit 64).
public func runExample(usage: String, _ body: () async throws -> Void) async -> Never {
    do {
        try await body()
        exit(0)
    } catch let error as UsageError {
        ExampleCommand.fail(error.message, usage: usage)
    } catch let error as RoostError {
        FileHandle.standardError.write(Data("error: \(error.message) (\(error.code))\n".utf8))
        exit(1)
    } catch {
        FileHandle.standardError.write(Data("error: \(error)\n".utf8))
        exit(1)
    }
}

/// A date for people, in UTC.
public func describe(milliseconds: Int64) -> String {
    let formatter = ISO8601DateFormatter()
    return formatter.string(from: Date(timeIntervalSince1970: Double(milliseconds) / 1000))
}
