import RoostJSON
import RoostScriptProtocol

/// `invoke` and what a running script asks of the worker: logs, ff calls, module sources.
extension WorkerSession {
    func invoke(_ message: JSONObject) -> Bool {
        guard let id = message["id"], case .number = id else { return false }
        let outcome = perform(message, id: id)
        var answer = jsonObject(("t", outcome["t"] ?? .string("failed")), ("id", id))
        for member in outcome.members where member.key != "t" && member.key != "id" {
            answer[member.key] = member.value
        }
        if answer["t"] == .string("done") {
            if answer["value"] == nil { answer["value"] = .null }
            if answer["response"] == nil { answer["response"] = .null }
            if answer["eventData"] == nil { answer["eventData"] = message["data"] ?? .null }
        }
        if exitCode == nil {
            do {
                try channel.send(answer)
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

    /// The `done` or `failed` members for one invocation.
    private func perform(_ message: JSONObject, id: JSONValue) -> JSONObject {
        if heap == nil {
            do {
                heap = try makeHeap(moduleIds: Array(modules.keys), memoryLimit: memoryLimit)
            } catch {
                return Self.scriptFailure(id: id, "Error: \(error.message)")
            }
        }
        guard let heap else { return Self.scriptFailure(id: id, "Error: no script heap") }
        heap.refusedAllocation = false
        invocationID = id
        lastSequence = 0
        let (answer, escaped) = heap.drive("invoke", payload: JSONWriter.bytes(.object(message)))
        invocationID = nil
        if heap.refusedAllocation, escaped != nil || Self.isFailure(answer) {
            return jsonObject(
                ("t", .string("failed")), ("error", .object(jsonObject(("origin", .string("memory"))))))
        }
        if let escaped { return Self.scriptFailure(id: id, escaped) }
        guard case .object(let outcome)? = try? JSONParser.parse(answer) else {
            return Self.scriptFailure(id: id, "TypeError: the script's value cannot be sent as JSON")
        }
        return outcome
    }

    private static func isFailure(_ answer: [UInt8]) -> Bool {
        answer.starts(with: Array(#"{"t":"failed""#.utf8))
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
        var text = message
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

    /// Sends `call` and waits for its `reply`: `{"result":…}` or `{"error":…}` for the prelude.
    private func call(method: String, argumentsJSON: [UInt8]) -> [UInt8] {
        guard let id = invocationID, exitCode == nil else {
            return Self.callError(500, "the script channel is closed", "script_channel_closed")
        }
        guard case .array(let arguments)? = try? JSONParser.parse(argumentsJSON) else {
            return Self.callError(
                400, "the arguments of \(method) cannot be sent as JSON", "script_arguments_not_json")
        }
        let sequence = lastSequence + 1
        do {
            try channel.send(
                jsonObject(
                    ("t", .string("call")), ("id", id), ("seq", .integer(sequence)),
                    ("method", .string(method)),
                    ("args", .array(arguments))))
        } catch  where error.kind == .malformed {
            return Self.callError(
                413, "the arguments of \(method) are over the 16 MiB frame limit", "script_message_too_large")
        } catch {
            exitCode = ScriptWorker.exitCode(for: error)
            return Self.callError(500, "the script channel is closed", "script_channel_closed")
        }
        lastSequence = sequence
        let reply: JSONObject
        do {
            reply = try channel.receive()
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
            return JSONWriter.bytes(.object(jsonObject(("error", error))))
        }
        return JSONWriter.bytes(.object(jsonObject(("result", reply["result"] ?? .null))))
    }

    private static func callError(_ status: Int64, _ message: String, _ code: String) -> [UInt8] {
        let error = jsonObject(
            ("statusCode", .integer(status)), ("statusMessage", .string(message)), ("code", .string(code)))
        return JSONWriter.bytes(.object(jsonObject(("error", .object(error)))))
    }
}
