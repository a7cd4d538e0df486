import RoostJSON
import RoostScriptProtocol

/// `invoke` and what a running script asks of the worker: logs, ff calls, module sources.
extension WorkerSession {
    /// Runs the script an `invoke` frame names; the prelude parses the frame itself and writes
    /// the whole answer, which goes back as it is (no JSON is parsed or written here twice).
    func invoke(_ message: JSONObject, frame: [UInt8]) -> Bool {
        guard let id = message["id"], case .number = id else { return false }
        let answer = perform(frame, id: id)
        if exitCode == nil {
            do {
                try channel.send(frame: answer)
            } catch  where error.kind == .malformed {
                send(
                    Self.scriptFailure(
                        id: id, "RangeError: the script's answer is over the 16 MiB frame limit"))
            } catch {
                exitCode = ScriptWorker.exitCode(for: error)
            }
        }
        // A heap that reached its cap may hold what filled it: the next script gets a fresh one.
        if heap?.refusedAllocation == true {
            heap = try? makeHeap(moduleIds: Array(modules.keys), memoryLimit: memoryLimit)
        }
        return true
    }

    /// The `done` or `failed` frame for one invocation.
    private func perform(_ frame: [UInt8], id: JSONValue) -> [UInt8] {
        if heap == nil {
            do {
                heap = try makeHeap(moduleIds: Array(modules.keys), memoryLimit: memoryLimit)
            } catch {
                return Self.failureFrame(id: id, "Error: \(error.message)")
            }
        }
        guard let heap else { return Self.failureFrame(id: id, "Error: no script heap") }
        heap.refusedAllocation = false
        invocationID = id
        lastSequence = 0
        let (answer, escaped) = heap.drive("invoke", payload: frame)
        invocationID = nil
        if heap.refusedAllocation, escaped != nil || answer.starts(with: Self.failedPrefix) {
            let memory = jsonObject(("origin", .string("memory")))
            return JSONWriter.bytes(
                .object(jsonObject(("t", .string("failed")), ("id", id), ("error", .object(memory)))))
        }
        if let escaped { return Self.failureFrame(id: id, escaped) }
        // The prelude writes `{"t":"done",…}` or `{"t":"failed",…}` with JSON.stringify.
        guard answer.starts(with: Self.donePrefix) || answer.starts(with: Self.failedPrefix) else {
            return Self.failureFrame(id: id, "TypeError: the script's value cannot be sent as JSON")
        }
        let frame = WellFormedText.utf8(answer)
        // Deeper than the server reads would cost this worker its channel: the run fails instead.
        guard JSONNesting.depth(of: frame) <= ScriptChannel.maximumDepth else {
            return Self.failureFrame(
                id: id,
                "RangeError: the script's answer is nested deeper than the \(ScriptChannel.maximumDepth) levels the server reads"
            )
        }
        return frame
    }

    private static let donePrefix = Array(#"{"t":"done","#.utf8)
    private static let failedPrefix = Array(#"{"t":"failed","#.utf8)

    private static func failureFrame(id: JSONValue, _ message: String) -> [UInt8] {
        JSONWriter.bytes(.object(scriptFailure(id: id, message)))
    }

    static func scriptFailure(id: JSONValue, _ message: String) -> JSONObject {
        let error = jsonObject(("origin", .string("script")), ("message", .string(message)))
        return jsonObject(("t", .string("failed")), ("id", id), ("error", .object(error)))
    }

    /// Answers the prelude's `host(op, first, second)`; nil is undefined in JavaScript.
    func answerHost(_ request: String, _ first: [UInt8], _ second: [UInt8]) -> [UInt8]? {
        switch request {
        case "source":
            return (loadingModules ?? modules)[String(decoding: first, as: UTF8.self)]
        case "log":
            log(level: String(decoding: first, as: UTF8.self), message: second)
            return nil
        case "call":
            return call(method: String(decoding: first, as: UTF8.self), argumentsJSON: second)
        default:
            return nil
        }
    }

    private func log(level: String, message: [UInt8]) {
        guard let id = invocationID else { return }
        var text = WellFormedText.utf8(message)
        if text.count > ScriptWorker.maximumLogBytes {
            // Cut at a character boundary: never inside a UTF-8 sequence.
            var end = ScriptWorker.maximumLogBytes
            while end > 0 && text[end] & 0xC0 == 0x80 { end -= 1 }
            text = Array(text[..<end])
        }
        send(
            jsonObject(
                ("t", .string("log")), ("id", id), ("level", .string(level)),
                ("message", .string(String(decoding: text, as: UTF8.self)))))
    }

    /// Sends `call` and waits for its `reply`, which goes to the prelude as it came: it reads
    /// `result` or `error` from it.
    private func call(method: String, argumentsJSON: [UInt8]) -> [UInt8] {
        guard let id = invocationID, exitCode == nil else {
            return Self.callError(500, "the script channel is closed", "script_channel_closed")
        }
        // The prelude's JSON.stringify wrote the arguments: an array's JSON text, sent as it is.
        guard argumentsJSON.first == UInt8(ascii: "[") else {
            return Self.callError(
                400, "the arguments of \(method) cannot be sent as JSON", "script_arguments_not_json")
        }
        // The frame nests the arguments' array one level deeper.
        guard JSONNesting.depth(of: argumentsJSON) < ScriptChannel.maximumDepth else {
            return Self.callError(
                400,
                "the arguments of \(method) are nested deeper than the \(ScriptChannel.maximumDepth) levels the server reads",
                "script_message_too_deep")
        }
        let sequence = lastSequence + 1
        var frame = Array(#"{"t":"call","id":"#.utf8)
        frame += JSONWriter.bytes(id)
        frame += Array(#","seq":\#(sequence),"method":"#.utf8)
        frame += JSONWriter.bytes(.string(method))
        frame += Array(#","args":"#.utf8)
        frame += WellFormedText.utf8(argumentsJSON)
        frame.append(UInt8(ascii: "}"))
        do {
            try channel.send(frame: frame)
        } catch  where error.kind == .malformed {
            return Self.callError(
                413, "the arguments of \(method) are over the 16 MiB frame limit", "script_message_too_large")
        } catch {
            exitCode = ScriptWorker.exitCode(for: error)
            return Self.callError(500, "the script channel is closed", "script_channel_closed")
        }
        lastSequence = sequence
        let reply: JSONObject
        let body: [UInt8]
        do {
            (reply, body) = try channel.receiveFrame()
        } catch {
            exitCode = ScriptWorker.exitCode(for: error)
            return Self.callError(500, "the script channel is closed", "script_channel_closed")
        }
        guard reply["t"] == .string("reply"), reply["seq"]?.integerValue == lastSequence else {
            exitCode = 2
            return Self.callError(500, "the server answered out of turn", "script_channel_closed")
        }
        if let error = reply["error"] {
            guard case .object = error else {
                exitCode = 2
                return Self.callError(500, "the server's error is not an object", "script_channel_closed")
            }
        }
        return body
    }

    private static func callError(_ status: Int64, _ message: String, _ code: String) -> [UInt8] {
        let error = jsonObject(
            ("statusCode", .integer(status)), ("statusMessage", .string(message)), ("code", .string(code)))
        return JSONWriter.bytes(.object(jsonObject(("error", .object(error)))))
    }
}
