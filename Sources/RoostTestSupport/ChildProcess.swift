import CRoostSystem
import Foundation
import Synchronization

/// A child process started with `posix_spawn`, for tests that run `roost` and the examples.
public final class ChildProcess: Sendable {
    public let pid: Int32
    private let exitStatus = Mutex<Int32?>(nil)

    /// A pipe; children inherit only the ends dup'ed onto their standard descriptors, since
    /// ``roost_spawn`` closes every other one.
    public static func makePipe() throws -> (read: Int32, write: Int32) {
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else {
            throw TestClientError(description: "pipe failed: \(String(cString: strerror(errno)))")
        }
        return (ends[0], ends[1])
    }

    /// Starts `path` with `arguments`; nil descriptors become /dev/null.
    public init(
        _ path: String, _ arguments: [String], input: Int32? = nil, output: Int32? = nil, error: Int32? = nil
    )
        throws
    {
        var argv: [UnsafeMutablePointer<CChar>?] = ([path] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var child: Int32 = 0
        let status = roost_spawn(path, &argv, input ?? -1, output ?? -1, error ?? -1, &child)
        guard status == 0 else {
            throw TestClientError(description: "cannot start \(path): \(String(cString: strerror(status)))")
        }
        pid = child
    }

    /// A test that fails before its child ends must not leave it running.
    deinit {
        if isRunning {
            kill(pid, SIGKILL)
            _ = waitForExit()
        }
    }

    public func signal(_ signal: Int32) { kill(pid, signal) }

    /// Whether the child has not ended yet (reaps it if it has).
    public var isRunning: Bool {
        exitStatus.withLock { status in
            if status != nil { return false }
            var raw: Int32 = 0
            guard waitpid(pid, &raw, WNOHANG) == pid else { return true }
            status = Self.decode(raw)
            return false
        }
    }

    /// Blocks until the child ends; its exit code, or the number of the signal that ended it
    /// (as Foundation's `terminationStatus`).
    @discardableResult
    public func waitForExit() -> Int32 {
        if let known = exitStatus.withLock({ $0 }) { return known }
        var raw: Int32 = 0
        while waitpid(pid, &raw, 0) < 0 && errno == EINTR {}
        return exitStatus.withLock { status in
            if status == nil { status = Self.decode(raw) }
            return status!
        }
    }

    /// Waits off the cooperative pool.
    public func exit() async throws -> Int32 {
        try await offCooperativePool { self.waitForExit() }
    }

    private static func decode(_ raw: Int32) -> Int32 {
        let signal = raw & 0x7f
        return signal == 0 ? (raw >> 8) & 0xff : signal
    }
}

/// Reads a descriptor to its end and closes it.
public func readAll(_ descriptor: Int32) -> Data {
    let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
    return handle.readDataToEndOfFile()
}
