import RoostCore
import RoostJSON

/// Runs scripts in a pool of worker processes (`roost script-worker`), never on an event loop:
/// each worker is killed and replaced when a script outlives `timeout`, and its JavaScript heap is
/// capped at `memoryLimit` bytes.
public final class ScriptRuntime: Sendable {
    public struct Configuration: Sendable {
        /// The program a worker runs: the `roost` binary itself.
        public var workerExecutable: String
        public var workerArguments = ["script-worker"]
        /// Worker processes; default one per core.
        public var workers: Int
        /// Seconds one invocation may run, its `ff` calls included.
        public var timeout: Double = 5
        /// Bytes of JavaScript heap one worker may hold.
        public var memoryLimit = 64 << 20
        /// Invocations waiting for a worker at most; more answer 503 `scripts_busy`.
        public var queueLimit = 256

        public init(workerExecutable: String, workers: Int) {
            self.workerExecutable = workerExecutable
            self.workers = workers
        }
    }

    public let configuration: Configuration

    public init(configuration: Configuration, log: @escaping @Sendable (String) -> Void) {
        self.configuration = configuration
    }

    /// Compiles every module in a worker; a syntax error throws naming the module and line, and
    /// the modules in force stay. On success every worker runs the new modules from its next job.
    public func load(_ modules: [String: String]) async throws {
        throw RoostError.scriptFailed("(runtime not built yet)")
    }

    /// Runs one invocation on a free worker, carrying out its `ff` calls through `calls`.
    public func invoke(_ invocation: ScriptInvocation, calls: any ScriptCallHandling) async throws
        -> ScriptOutcome
    {
        throw RoostError.scriptFailed(invocation.name)
    }

    /// Kills every worker and fails what waits.
    public func shutdown() async {}
}
