import Dispatch
import Foundation
import RoostCore
import RoostJSON
import RoostScriptProtocol

/// What one thread of the runtime's pool owns: the worker process it talks to (started on
/// first use) and the executor its scripts' `ff` calls run on.
struct ScriptThread {
    let slot: Int
    let executor = ScriptSlotExecutor()
    var worker: ScriptWorkerProcess?
}

/// One thread of the pool at work: takes a job, makes sure its worker runs the modules in force,
/// and carries the conversation (the script's `ff` calls, its logs) until the script finishes,
/// fails or runs out of time, in which case the worker is killed.
struct ScriptSlot {
    let runtime: ScriptRuntime
    let slot: Int
    /// Where the script's `ff` calls run: on this slot's own thread.
    let executor: ScriptSlotExecutor

    init(runtime: ScriptRuntime, thread: ScriptThread) {
        self.runtime = runtime
        slot = thread.slot
        executor = thread.executor
    }

    /// Runs `job` on the thread's worker and answers its caller.
    func perform(_ job: ScriptJob, on worker: inout ScriptWorkerProcess?) {
        job.continuation.resume(with: Result { try run(job, on: &worker) })
    }

    /// Loads the modules in force into the worker ahead of need.
    func warm(_ worker: inout ScriptWorkerProcess?) {
        _ = try? ready(&worker, deadline: ScriptChannel.monotonicNanoseconds() + Self.workerStartNanoseconds)
    }

    /// Kills the worker; the next job starts another.
    func discard(_ worker: inout ScriptWorkerProcess?) {
        guard let process = worker else { return }
        process.terminate()
        worker = nil
        runtime.noteWorker(slot: slot, pid: nil)
    }

    private var timeout: Double { runtime.configuration.timeout }
    private static let workerStartNanoseconds = UInt64(ScriptRuntime.Configuration.workerStartLimit * 1e9)

    private func run(_ job: ScriptJob, on worker: inout ScriptWorkerProcess?) throws -> ScriptOutcome {
        let name = job.invocation.name
        let configuration = runtime.configuration
        let waited = configuration.monotonicNanoseconds() &- job.enqueuedAt
        if waited > UInt64((configuration.queueWait ?? timeout) * 1e9) { throw RoostError.scriptsBusy }
        let start = ScriptChannel.monotonicNanoseconds()
        do {
            // Starting a worker is the pool's cost, not the script's: its time starts after.
            let process = try ready(&worker, deadline: start + Self.workerStartNanoseconds)
            let deadline = ScriptChannel.monotonicNanoseconds() + UInt64(timeout * 1e9)
            let message = JSONWriter.bytes(.object(invokeMessage(job.invocation)))
            // Too big or too deep to send is the invocation's fault, not the worker's: it stays.
            guard message.count <= ScriptChannel.maximumFrameBytes else {
                throw RoostError.scriptDataTooLarge(name, bytes: ScriptChannel.maximumFrameBytes)
            }
            guard JSONNesting.depth(of: message) <= ScriptChannel.maximumDepth else {
                throw RoostError.scriptMessageTooDeep("The data for the script '\(name.prefix(100))'")
            }
            try process.channel.send(frame: message)
            return try converse(job, over: process.channel, deadline: deadline)
        } catch let error as ScriptChannelError {
            discard(&worker)
            if error.kind == .timedOut {
                runtime.log(
                    "script '\(name)' ran past \(timeout) s; its worker was killed\(requestSuffix(job))")
                throw RoostError.scriptTimeout(name, seconds: timeout)
            }
            runtime.log("script '\(name)' lost its worker (\(error.message))\(requestSuffix(job))")
            throw RoostError.scriptFailed(name)
        }
    }

    /// The worker, started and loaded with the modules in force.
    private func ready(_ worker: inout ScriptWorkerProcess?, deadline: UInt64) throws(ScriptChannelError)
        -> ScriptWorkerProcess
    {
        let configuration = runtime.configuration
        let modules = runtime.queue.modules
        let process: ScriptWorkerProcess
        if let worker {
            process = worker
        } else {
            process = try ScriptWorkerProcess.spawn(
                executable: configuration.workerExecutable, arguments: configuration.spawnArguments)
            worker = process
            runtime.noteWorker(slot: slot, pid: process.pid)
        }
        if process.generation != modules.generation {
            let answer = try process.load(
                modules: modules.modules, generation: modules.generation,
                memoryLimit: configuration.memoryLimit, deadline: deadline)
            guard answer["t"]?.stringValue == "loaded" else {
                throw ScriptChannelError(.malformed, "the worker refused modules that compiled before")
            }
        }
        return process
    }

    private func invokeMessage(_ invocation: ScriptInvocation) -> JSONObject {
        var message = JSONObject(uniqueMembers: [
            ("t", .string("invoke")), ("id", .integer(1)), ("kind", .string(invocation.kind.rawValue)),
            ("name", .string(invocation.name)),
        ])
        if let code = invocation.entry.code {
            message["code"] = .string(code)
        } else {
            message["module"] = invocation.entry.module.map(JSONValue.string) ?? .null
            message["function"] = invocation.entry.function.map(JSONValue.string) ?? .null
        }
        if let argument = invocation.argument { message["argument"] = .string(argument) }
        message["data"] = invocation.data
        if invocation.returnsEventData { message["returnsEventData"] = .bool(true) }
        message["context"] = .object(invocation.context)
        return message
    }

    /// Reads the worker's messages until the script ends, answering its calls.
    private func converse(_ job: ScriptJob, over channel: ScriptChannel, deadline: UInt64) throws
        -> ScriptOutcome
    {
        while true {
            let message = try channel.receive(deadline: deadline)
            switch message["t"]?.stringValue {
            case "call":
                let seq = message["seq"] ?? .null
                let method = message["method"]?.stringValue ?? ""
                var arguments: [JSONValue] = []
                if case .array(let items)? = message["args"] { arguments = items }
                let result = try answer(method, arguments, calls: job.calls, deadline: deadline)
                try channel.send(frame: Self.reply(seq: seq, method: method, result))
            case "log":
                job.calls.log(
                    level: message["level"]?.stringValue ?? "info",
                    message: message["message"]?.stringValue ?? "")
            case "done":
                return ScriptOutcome(
                    value: message["value"] ?? .null, response: message["response"]?.objectValue,
                    eventData: message["eventData"])
            case "failed":
                throw failure(message["error"]?.objectValue ?? JSONObject(), job)
            default:
                throw ScriptChannelError(
                    .malformed, "an unexpected '\(message["t"]?.stringValue ?? "")' message")
            }
        }
    }

    /// Runs one `ff` call on this pool thread (see ``ScriptSlotExecutor``) and waits for it no
    /// longer than the script's deadline.
    private func answer(
        _ method: String, _ arguments: [JSONValue], calls: any ScriptCallHandling, deadline: UInt64
    ) throws(ScriptChannelError) -> Result<JSONValue, any Error> {
        let result = executor.run(until: deadline) { () async -> Result<JSONValue, any Error> in
            do { return .success(try await calls.call(method, arguments: arguments)) } catch {
                return .failure(error)
            }
        }
        guard let result else {
            throw ScriptChannelError(.timedOut, "an ff call outlived the script's deadline")
        }
        return result
    }

    /// The `reply` frame for a call's result; a result the worker could not take (too big, too
    /// deep) is an error the script sees instead.
    static func reply(seq: JSONValue, method: String, _ result: Result<JSONValue, any Error>) -> [UInt8] {
        var reply = JSONObject(uniqueMembers: [("t", .string("reply")), ("seq", seq)])
        switch result {
        case .success(let value): reply["result"] = value
        case .failure(let error): reply["error"] = .object(wireError(error))
        }
        let frame = JSONWriter.bytes(.object(reply))
        let refusal: RoostError? =
            if frame.count > ScriptChannel.maximumFrameBytes {
                .scriptDataTooLarge("ff.\(method.prefix(100))", bytes: ScriptChannel.maximumFrameBytes)
            } else if JSONNesting.depth(of: frame) > ScriptChannel.maximumDepth {
                .scriptMessageTooDeep("The result of ff.\(method.prefix(100))")
            } else { nil }
        guard let refusal else { return frame }
        reply["result"] = nil
        reply["error"] = .object(wireError(refusal))
        return JSONWriter.bytes(.object(reply))
    }

    static func wireError(_ error: any Error) -> JSONObject {
        let roost =
            error as? RoostError ?? RoostError(status: 500, code: .internalError, message: "The call failed.")
        return JSONObject(uniqueMembers: [
            ("statusCode", .integer(Int64(roost.status))), ("statusMessage", .string(roost.message)),
            ("code", .string(roost.code.rawValue)),
        ])
    }

    /// What a `failed` message means for the caller; the script's own words go to the log.
    private func failure(_ error: JSONObject, _ job: ScriptJob) -> RoostError {
        let name = job.invocation.name
        switch error["origin"]?.stringValue {
        case "refusal":
            let status = error["statusCode"].flatMap { Int($0.stringValue ?? JSONWriter.string($0)) } ?? 400
            return .scriptRefused(status: status, message: error["statusMessage"]?.stringValue ?? "Refused.")
        case "memory":
            runtime.log("script '\(name)' went over its memory limit\(requestSuffix(job))")
            return .scriptMemory(name, bytes: runtime.configuration.memoryLimit)
        default:
            let place = [error["module"]?.stringValue, error["line"].map { "line \(JSONWriter.string($0))" }]
                .compactMap { $0 }.joined(separator: ", ")
            let text = error["message"]?.stringValue ?? error["statusMessage"]?.stringValue ?? "an error"
            runtime.log(
                "script '\(name)' failed: \(text)\(place.isEmpty ? "" : " (\(place))")\(requestSuffix(job))")
            return .scriptFailed(name)
        }
    }

    private func requestSuffix(_ job: ScriptJob) -> String {
        job.invocation.context["requestId"]?.stringValue.map { " [request \($0)]" } ?? ""
    }
}

extension RoostError {
    /// What crosses to or from a script worker is nested deeper than its channel takes.
    static func scriptMessageTooDeep(_ what: String) -> RoostError {
        RoostError(
            status: 400, code: .scriptMessageTooDeep,
            message:
                "\(what) is nested deeper than the \(ScriptChannel.maximumDepth) levels a script worker takes.",
            details: JSONObject(uniqueMembers: [("limitDepth", .integer(Int64(ScriptChannel.maximumDepth)))]))
    }
}
