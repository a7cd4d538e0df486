import Dispatch
import Foundation
import RoostCore
import RoostJSON
import RoostScriptProtocol
import RoostThreads
import Synchronization

/// Runs scripts in a pool of worker processes (`roost script-worker`), never on an event loop:
/// each worker is owned by one thread of the pool, killed and replaced when a script outlives
/// `timeout`, and its JavaScript heap is capped at `memoryLimit` bytes. Workers start on first use
/// and after each `load`, so a server without scripts runs no worker.
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
        /// Seconds an invocation may wait for a worker; one that waited longer answers 503
        /// `scripts_busy` rather than run late. Nil: the timeout (a run that waited a whole
        /// script's time is better shed).
        public var queueWait: Double?
        /// Nanoseconds on a monotonic clock, for the queue's waits (tests move it themselves).
        public var monotonicNanoseconds: @Sendable () -> UInt64 = { ScriptChannel.monotonicNanoseconds() }
        /// Invocations of one owner (see ``ScriptInvocation/owner``) waiting at most; more answer
        /// 429 `too_many_script_runs` to that owner, so one owner holds at most a quarter of the
        /// queue (committed writes' handlers wait behind the owner's instead; see
        /// ``ScriptInvocation/committed``).
        public var ownerQueueLimit = 64

        /// Whom workers run as: by default, when this process is root, `nobody`; nil keeps this
        /// process's user (a server not started as root cannot change it).
        public var workerUser: ScriptWorkerUser? = ScriptWorkerUser.defaultForThisProcess
        /// Bytes of address space one worker may map: its heap's limit twice over (the allocator's
        /// slack) and 256 MiB for the program, its libraries and stacks.
        public var addressSpaceLimit: Int { 2 * memoryLimit + (256 << 20) }

        /// Seconds a worker may take to start and load the modules: the pool's cost, not a run's.
        public static let workerStartLimit: Double = 30

        public init(workerExecutable: String, workers: Int) {
            self.workerExecutable = workerExecutable
            self.workers = max(1, workers)
        }

        /// The worker's arguments with its confinement.
        var spawnArguments: [String] {
            var arguments = workerArguments
            if let workerUser { arguments += ["--uid", "\(workerUser.uid)", "--gid", "\(workerUser.gid)"] }
            return arguments + ["--address-space", "\(addressSpaceLimit)"]
        }
    }

    public let configuration: Configuration
    /// Runs, failures and durations per handler or extension, for `/metrics`.
    public let metrics = ScriptMetrics()
    let queue = ScriptJobQueue()
    let log: @Sendable (String) -> Void
    /// One thread per worker process, each owning its process; started on first use.
    private let threads: ThreadPool<ScriptThread>
    /// Where modules are compiled before they are put in force (a worker of its own each time).
    private let loader = ThreadPool(name: "roost-script-load", threads: 1)
    /// Each pool thread's worker process now, by slot.
    private let workers = Mutex<[Int: Int32]>([:])

    /// The process ids of the workers running now, by slot (tests and diagnostics).
    public var workerProcessIDs: [Int32] { workers.withLock { $0.sorted { $0.key < $1.key }.map(\.value) } }

    /// A pool thread started a worker (`pid`) or lost its worker (nil).
    func noteWorker(slot: Int, pid: Int32?) {
        workers.withLock { $0[slot] = pid }
        if pid != nil { metrics.noteWorkerStart() }
    }

    /// Invocations waiting for a free worker now.
    public var waiting: Int { queue.waiting }

    public init(configuration: Configuration, log: @escaping @Sendable (String) -> Void) {
        self.configuration = configuration
        self.log = log
        // A worker still running when its thread ends is killed (the runtime is shutting down).
        threads = ThreadPool(
            name: "roost-script", threads: configuration.workers, makeResource: { ScriptThread(slot: $0) },
            releaseResource: { _, thread in thread.worker?.terminate() })
    }

    /// Compiles every module in a fresh worker; a syntax error throws ``ScriptLoadError`` naming
    /// the module and line, and the modules in force stay. On success every worker runs the new
    /// modules from its next job, and idle workers load them at once.
    public func load(_ modules: [String: String]) async throws {
        if modules == queue.modules.modules { return }
        let configuration = configuration
        let answer: JSONObject = try await loader.run(ignoringCancellation: true) {
            let worker = try ScriptWorkerProcess.spawn(
                executable: configuration.workerExecutable, arguments: configuration.spawnArguments)
            defer { worker.terminate() }
            return try worker.load(
                modules: modules, generation: 0, memoryLimit: configuration.memoryLimit,
                deadline: ScriptChannel.monotonicNanoseconds() + UInt64(Configuration.workerStartLimit * 1e9))
        }
        guard answer["t"]?.stringValue == "loaded" else {
            throw ScriptLoadError(
                module: answer["module"]?.stringValue ?? "?",
                line: answer["line"]?.integerValue.map(Int.init),
                message: answer["message"]?.stringValue ?? "the script does not compile")
        }
        queue.replaceModules(modules)
        // Idle workers load the new modules at once (busy ones after their job).
        threads.runOnEachThread { [self] thread in
            ScriptSlot(runtime: self, thread: thread).warm(&thread.worker)
        }
    }

    /// Runs one invocation on a free worker, carrying out its `ff` calls through `calls`.
    public func invoke(_ invocation: ScriptInvocation, calls: any ScriptCallHandling) async throws
        -> ScriptOutcome
    {
        let started = ContinuousClock.now
        do {
            let outcome = try await withCheckedThrowingContinuation { continuation in
                let job = ScriptJob(
                    invocation: invocation, calls: calls, continuation: continuation,
                    enqueuedAt: configuration.monotonicNanoseconds())
                switch queue.enqueue(
                    job, limit: configuration.queueLimit, ownerLimit: configuration.ownerQueueLimit)
                {
                case .queued:
                    // One pool job per queued job: it runs whichever job's turn it is then.
                    threads.execute { [self] thread in
                        guard let next = queue.take() else { return }
                        ScriptSlot(runtime: self, thread: thread).perform(next, on: &thread.worker)
                    }
                case .busy: continuation.resume(throwing: RoostError.scriptsBusy)
                case .ownerFull:
                    continuation.resume(
                        throwing: RoostError.tooManyWaitingRuns(configuration.ownerQueueLimit))
                }
            }
            metrics.record(invocation.name, duration: ContinuousClock.now - started, failure: nil)
            return outcome
        } catch {
            metrics.record(
                invocation.name, duration: ContinuousClock.now - started,
                failure: ((error as? RoostError)?.code ?? .scriptFailed).rawValue)
            throw error
        }
    }

    /// Kills every worker, fails what waits, and joins the pool's threads.
    public func shutdown() async {
        let pending = queue.stop()
        for job in pending { job.continuation.resume(throwing: RoostError.scriptsBusy) }
        await threads.shutdown()
        await loader.shutdown()
        workers.withLock { $0 = [:] }
    }
}

extension RoostError {
    /// One owner already has `limit` runs waiting for a worker.
    static func tooManyWaitingRuns(_ limit: Int) -> RoostError {
        RoostError(
            status: 429, code: .tooManyScriptRuns,
            message:
                "You have \(limit) server-side script runs waiting for a worker, the most one caller may have; wait for one to finish.",
            details: JSONObject(uniqueMembers: [("limit", .integer(Int64(limit)))]))
    }
}

/// A module that does not compile: the file and line at fault.
public struct ScriptLoadError: Error, Sendable, Equatable, CustomStringConvertible {
    public let module: String
    public let line: Int?
    public let message: String

    public var description: String {
        "\(module).js\(line.map { ", line \($0)" } ?? ""): \(message)"
    }
}
