import CDuktape
import RoostJSON
import RoostScriptProtocol

#if canImport(Glibc)
    import Glibc
#endif

/// The JavaScript side of server-side scripts: the loop a `roost script-worker` process runs on
/// its end of the socket pair (see docs/scripts.md and the scripts contract).
public enum ScriptWorker {
    /// The heap cap when the server's `load` names none.
    public static let defaultMemoryLimit = 64 << 20
    /// The longest `log` message; longer ones are cut.
    public static let maximumLogBytes = 8 << 10

    /// Serves `load` and `invoke` messages on `descriptor` until the channel closes (0) or brings
    /// something that is not a valid message (2); any other channel failure is 1.
    ///
    /// A channel lost while a script waits for a reply throws in the script, which may catch it
    /// and go on; the loop returns once it ends. With `exitOnChannelLoss` (a worker process) the
    /// process exits at once instead, so a server that died leaves no script running.
    public static func run(descriptor: Int32, exitOnChannelLoss: Bool = false) -> Int32 {
        let session = WorkerSession(channel: ScriptChannel(descriptor: descriptor))
        session.exitOnChannelLoss = exitOnChannelLoss
        return session.run()
    }

    /// The process's cheap hardening, before any script runs: no privilege gain through exec,
    /// no descriptor above the channel's (3), SIGPIPE ignored. Only for a worker process.
    public static func hardenProcess() {
        roost_worker_harden()
    }

    static func exitCode(for error: ScriptChannelError) -> Int32 {
        switch error.kind {
        case .closed: 0
        case .malformed: 2
        case .timedOut, .system: 1
        }
    }
}

/// One worker's state: the loaded modules, the heap, and the invocation in progress.
final class WorkerSession {
    let channel: ScriptChannel
    var modules: [String: [UInt8]] = [:]
    /// The modules of a `load` being checked, which `require` sees until the load ends.
    var loadingModules: [String: [UInt8]]?
    var memoryLimit = ScriptWorker.defaultMemoryLimit
    var heap: ScriptHeap?
    /// The running invocation's id; logs and calls outside one are dropped or refused.
    var invocationID: JSONValue?
    var lastSequence: Int64 = 0
    /// Set when the channel failed while a script ran: the loop stops with it once the script ends.
    var exitCode: Int32? {
        didSet {
            if exitOnChannelLoss, let exitCode, invocationID != nil { _exit(exitCode) }
        }
    }
    var exitOnChannelLoss = false

    init(channel: ScriptChannel) { self.channel = channel }

    func run() -> Int32 {
        while exitCode == nil {
            let message: JSONObject
            let frame: [UInt8]
            do {
                (message, frame) = try channel.receiveFrame()
            } catch {
                return ScriptWorker.exitCode(for: error)
            }
            let understood =
                switch message["t"]?.stringValue {
                case "load": load(message)
                case "invoke": invoke(message, frame: frame)
                default: false
                }
            if !understood { return 2 }
        }
        return exitCode ?? 0
    }

    func send(_ message: JSONObject) {
        guard exitCode == nil else { return }
        do {
            try channel.send(message)
        } catch {
            exitCode = ScriptWorker.exitCode(for: error)
        }
    }

    /// A new heap over `moduleIds`, or why not.
    func makeHeap(moduleIds: [String], memoryLimit: Int) throws(ScriptHeap.CreationError) -> ScriptHeap {
        try ScriptHeap(
            memoryLimit: memoryLimit, moduleIds: moduleIds,
            owner: Unmanaged.passUnretained(self).toOpaque(), callback: scriptHostCallback)
    }

    // MARK: load

    func load(_ message: JSONObject) -> Bool {
        guard let generation = message["generation"], case .number = generation,
            case .object(let sources)? = message["modules"]
        else { return false }
        var limit = ScriptWorker.defaultMemoryLimit
        if let requested = message["memoryLimit"] {
            guard let bytes = requested.integerValue, bytes > 0 else { return false }
            limit = Int(bytes)
        }
        var loaded: [String: [UInt8]] = [:]
        for (id, source) in sources.members {
            guard let text = source.stringValue else { return false }
            loaded[id] = Array(text.utf8)
        }
        var answer = jsonObject(("t", .string("loaded")), ("generation", generation))
        if let failure = check(sources.keys, loaded, memoryLimit: limit) {
            answer["t"] = .string("loadFailed")
            for member in failure.members { answer[member.key] = member.value }
        }
        send(answer)
        return true
    }

    /// Builds a heap over the new modules and compiles each; on success it replaces the old one.
    /// Returns the `loadFailed` members otherwise, leaving the running modules in force.
    private func check(_ ids: [String], _ loaded: [String: [UInt8]], memoryLimit limit: Int) -> JSONObject? {
        loadingModules = loaded
        defer { loadingModules = nil }
        let candidate: ScriptHeap
        do {
            candidate = try makeHeap(moduleIds: ids, memoryLimit: limit)
        } catch {
            return jsonObject(("message", .string(error.message)))
        }
        for id in ids {
            let (answer, escaped) = candidate.drive("check", payload: Array(id.utf8))
            if candidate.refusedAllocation {
                return jsonObject(
                    ("module", .string(id)),
                    (
                        "message",
                        .string(
                            "RangeError: the memory limit of \(limit) bytes was reached compiling the module")
                    ))
            }
            if let escaped { return jsonObject(("module", .string(id)), ("message", .string(escaped))) }
            guard !answer.isEmpty else { continue }
            var failure = jsonObject(("module", .string(id)))
            let reported = (try? JSONParser.parse(answer))?.objectValue
            if let line = reported?["line"], line.integerValue != nil { failure["line"] = line }
            failure["message"] = reported?["message"] ?? .string("SyntaxError")
            return failure
        }
        modules = loaded
        memoryLimit = limit
        heap = candidate
        return nil
    }
}

/// The shim's host callback: the heap's owner is the session that made it.
let scriptHostCallback: roost_duk_host_callback = {
    owner, op, opLength, first, firstLength, second, secondLength, answerLength in
    let session = Unmanaged<WorkerSession>.fromOpaque(owner!).takeUnretainedValue()
    func bytes(_ pointer: UnsafePointer<CChar>?, _ count: Int) -> [UInt8] {
        guard let pointer else { return [] }
        return Array(UnsafeRawBufferPointer(start: pointer, count: count))
    }
    let request = String(decoding: bytes(op, opLength), as: UTF8.self)
    guard let answer = session.answerHost(request, bytes(first, firstLength), bytes(second, secondLength))
    else { return nil }
    guard let copy = malloc(max(answer.count, 1)) else { return nil }
    if !answer.isEmpty {
        answer.withUnsafeBytes { copy.copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
    }
    answerLength.pointee = answer.count
    return copy.assumingMemoryBound(to: CChar.self)
}

/// An object from members in order (keys unique).
func jsonObject(_ members: (String, JSONValue)...) -> JSONObject {
    var object = JSONObject()
    for (key, value) in members { object[key] = value }
    return object
}
