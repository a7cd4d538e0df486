import Foundation
import RoostJSON
import RoostScriptProtocol
import RoostScriptWorker

/// A script worker on a thread of its own over a real socket pair, with the test as the server.
final class WorkerHarness: @unchecked Sendable {
    let server: ScriptChannel
    private let serverDescriptor: Int32
    private let exit = WorkerExit()
    private var closed = false

    init() {
        var descriptors: [Int32] = [0, 0]
        precondition(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &descriptors) == 0)
        serverDescriptor = descriptors[0]
        server = ScriptChannel(descriptor: descriptors[0])
        let workerDescriptor = descriptors[1]
        // Not the cooperative pool: the worker blocks on its socket, as the real process does.
        let thread = Thread { [exit] in
            let status = ScriptWorker.run(descriptor: workerDescriptor)
            close(workerDescriptor)
            exit.record(status)
        }
        thread.stackSize = 8 << 20
        thread.start()
    }

    /// A test that failed half-way still ends its worker.
    deinit {
        if !closed { close(serverDescriptor) }
    }

    func send(_ text: String) throws {
        try server.send(json(text))
    }

    /// The worker's next message; a worker silent for 60 s fails the test instead of hanging it.
    func receive() throws -> JSONObject {
        try server.receive(deadline: ScriptChannel.monotonicNanoseconds() + 60_000_000_000)
    }

    /// Sends `load` with these modules and expects `loaded`.
    func load(_ modules: [String: String], memoryLimit: Int? = nil, generation: Int = 1) throws {
        try server.send(loadMessage(modules, memoryLimit: memoryLimit, generation: generation))
        let answer = try receive()
        guard answer == json(#"{"t":"loaded","generation":\#(generation)}"#) else {
            throw HarnessError.unexpected(answer)
        }
    }

    func loadMessage(_ modules: [String: String], memoryLimit: Int?, generation: Int) -> JSONObject {
        var sources = JSONObject()
        for id in modules.keys.sorted() { sources[id] = .string(modules[id]!) }
        var message = json(#"{"t":"load","generation":\#(generation)}"#)
        if let memoryLimit { message["memoryLimit"] = .integer(Int64(memoryLimit)) }
        message["modules"] = .object(sources)
        return message
    }

    /// Writes raw bytes, for frames `ScriptChannel` would never send.
    func sendRaw(_ bytes: [UInt8]) {
        _ = bytes.withUnsafeBytes { write(serverDescriptor, $0.baseAddress!, $0.count) }
    }

    /// Closes the server's end and returns the worker's exit status.
    func finish() -> Int32? {
        if !closed {
            closed = true
            close(serverDescriptor)
        }
        return waitForExit()
    }

    /// The worker's exit status once it has stopped by itself (nil if it has not within 60 s).
    func waitForExit() -> Int32? {
        exit.wait()
    }
}

/// The worker thread's exit status, set once.
final class WorkerExit: @unchecked Sendable {
    private let exited = DispatchSemaphore(value: 0)
    private let lock = NSLock()
    private var code: Int32?

    func record(_ status: Int32) {
        lock.withLock { code = status }
        exited.signal()
    }

    func wait() -> Int32? {
        if let known = lock.withLock({ code }) { return known }
        guard exited.wait(timeout: .now() + 60) == .success else { return nil }
        return lock.withLock { code }
    }
}

enum HarnessError: Error {
    case unexpected(JSONObject)
}

/// A JSON object from its text, for messages and expected answers written as JSON.
func json(_ text: String) -> JSONObject {
    guard case .object(let object)? = try? JSONParser.parse(text) else {
        fatalError("not a JSON object: \(text)")
    }
    return object
}

/// An `invoke` of module+function with no data or context beyond the given.
func invocation(id: Int, module: String, function: String, argument: String = "", data: String = "null")
    -> JSONObject
{
    var message = json(#"{"t":"invoke","id":\#(id),"kind":"handler","name":"Test"}"#)
    message["module"] = .string(module)
    message["function"] = .string(function)
    message["argument"] = .string(argument)
    message["data"] = try? JSONParser.parse(data)
    message["context"] = .object(
        json(#"{"activeUser":null,"appAddress":"https://app.example","requestId":"r1"}"#))
    return message
}

/// An `invoke` of a code snippet.
func snippet(id: Int, _ code: String, argument: String = "", data: String = "null") -> JSONObject {
    var message = json(#"{"t":"invoke","id":\#(id),"kind":"run","name":"Test"}"#)
    message["code"] = .string(code)
    message["argument"] = .string(argument)
    message["data"] = try? JSONParser.parse(data)
    message["context"] = .object(json(#"{"activeUser":{"guid":"u1"},"appAddress":"https://app.example"}"#))
    return message
}
