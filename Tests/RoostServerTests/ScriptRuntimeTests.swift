import Foundation
import RoostCore
import RoostJSON
import RoostScripts
import RoostTestSupport
import Synchronization
import Testing

/// Issue 19: the pool of script worker processes, driven directly: limits on time and memory,
/// syntax errors at load, a full queue, and the `ff` call round trip.
@Suite("Script runtime: worker processes, limits, calls") struct ScriptRuntimeTests {
    static let modules = [
        "scripts/basics": """
        var ff = require('ffef/FatFractal');
        exports.spin = function () { while (true) {} };
        exports.echo = function (argument) { return 'echo:' + argument; };
        exports.bomb = function () { var a = []; while (true) { a.push(new Array(100000).join('x') + a.length); } };
        exports.fetch = function () {
            var object = ff.getObjFromUrl('/ff/resources/Celebrity/abc');
            print('fetched', object.name);
            return object.name + '!';
        };
        exports.callThenEcho = function (argument) {
            ff.getObjFromUrl('/ff/resources/Started/' + argument);
            return argument;
        };
        """
    ]

    func runtime(
        timeout: Double = 60, memory: Int = 16 << 20, workers: Int = 1, queueLimit: Int = 256,
        ownerQueueLimit: Int = 128, queueWait: Double = 600,
        monotonicNanoseconds: (@Sendable () -> UInt64)? = nil
    ) async throws -> ScriptRuntime {
        var configuration = ScriptRuntime.Configuration(
            workerExecutable: try RoostProcess.binaryPath(), workers: workers)
        configuration.timeout = timeout
        // Short timeouts here test the runs' own limits; a loaded machine's late start of the
        // next run is not shed (queueWaitSheds tests that bound).
        configuration.queueWait = queueWait
        if let monotonicNanoseconds { configuration.monotonicNanoseconds = monotonicNanoseconds }
        configuration.memoryLimit = memory
        configuration.queueLimit = queueLimit
        configuration.ownerQueueLimit = ownerQueueLimit
        let runtime = ScriptRuntime(configuration: configuration, log: { _ in })
        try await runtime.load(Self.modules)
        return runtime
    }

    func invocation(_ function: String, argument: String = "") -> ScriptInvocation {
        ScriptInvocation(
            kind: .run, name: function, entry: ScriptEntry(module: "scripts/basics", function: function),
            argument: argument, data: .null, context: JSONObject())
    }

    func code(of error: any Error) -> String? { (error as? RoostError)?.code.rawValue }

    @Test("an endless loop is stopped at the timeout with script_timeout, and the next run works")
    func endlessLoop() async throws {
        let runtime = try await runtime(timeout: 1)
        await #expect { try await runtime.invoke(invocation("spin"), calls: RecordingCalls()) } throws: {
            ($0 as? RoostError)?.code == "script_timeout" && ($0 as? RoostError)?.status == 500
        }
        let next = try await runtime.invoke(invocation("echo", argument: "after"), calls: RecordingCalls())
        #expect(next.value == .string("echo:after"))
        #expect(runtime.metrics.failures(of: "spin") == ["script_timeout": 1])
        await runtime.shutdown()
    }

    @Test(
        "a memory bomb is stopped with script_memory, and the same pool runs the next script",
        .timeLimit(.minutes(5)))
    func memoryBomb() async throws {
        // The time limit is out of reach, so only the memory limit can stop the bomb: with 20 s the
        // two limits raced on a loaded machine (the bomb allocates at the CPU's pace).
        let runtime = try await runtime(timeout: 240, memory: 16 << 20)
        await #expect { try await runtime.invoke(invocation("bomb"), calls: RecordingCalls()) } throws: {
            ($0 as? RoostError)?.code == "script_memory"
        }
        let next = try await runtime.invoke(invocation("echo", argument: "x"), calls: RecordingCalls())
        #expect(next.value == .string("echo:x"))
        await runtime.shutdown()
    }

    @Test("a module with a syntax error is refused with its file and line; the modules in force stay")
    func syntaxError() async throws {
        let runtime = try await runtime()
        let broken = [
            "scripts/basics": Self.modules["scripts/basics"]!, "scripts/broken": "var a = 1;\nvar b = ;\n",
        ]
        await #expect {
            try await runtime.load(broken)
        } throws: { error in
            guard let load = error as? ScriptLoadError else { return false }
            return load.module == "scripts/broken" && load.line == 2
        }
        let still = try await runtime.invoke(invocation("echo", argument: "kept"), calls: RecordingCalls())
        #expect(still.value == .string("echo:kept"))
        await runtime.shutdown()
    }

    @Test("an ff call goes to the server side and its answer comes back to the script; print is logged")
    func callRoundTrip() async throws {
        let runtime = try await runtime()
        let calls = RecordingCalls(answer: .object(JSONObject(uniqueMembers: [("name", .string("Ada"))])))
        let outcome = try await runtime.invoke(invocation("fetch"), calls: calls)
        #expect(outcome.value == .string("Ada!"))
        #expect(calls.calls == ["getObjFromUrl([\"/ff/resources/Celebrity/abc\"])"])
        #expect(calls.lines == ["fetched Ada"])
        await runtime.shutdown()
    }

    @Test(
        "an ff call that outlives its script is left to finish elsewhere: the run is script_timeout, and the slot runs the next script"
    )
    func abandonedCall() async throws {
        let runtime = try await runtime(timeout: 1, workers: 1)
        let stubborn = StubbornCalls()
        await #expect {
            try await runtime.invoke(invocation("callThenEcho", argument: "1"), calls: stubborn)
        } throws: {
            ($0 as? RoostError)?.code == "script_timeout"
        }
        #expect(stubborn.entered && !stubborn.finished)
        let calls = RecordingCalls(answer: .object(JSONObject(uniqueMembers: [("name", .string("Ada"))])))
        #expect(try await runtime.invoke(invocation("fetch"), calls: calls).value == .string("Ada!"))
        stubborn.open()
        #expect(await eventually(within: 30) { stubborn.finished })
        #expect(try await runtime.invoke(invocation("fetch"), calls: calls).value == .string("Ada!"))
        await runtime.shutdown()
    }

    @Test("an invocation too big for a worker's message is 413 script_data_too_large, and the worker stays")
    func dataTooLarge() async throws {
        let lines = Mutex<[String]>([])
        var configuration = ScriptRuntime.Configuration(
            workerExecutable: try RoostProcess.binaryPath(), workers: 1)
        configuration.timeout = 60
        let runtime = ScriptRuntime(
            configuration: configuration, log: { line in lines.withLock { $0.append(line) } })
        try await runtime.load(Self.modules)
        #expect(
            try await runtime.invoke(invocation("echo", argument: "before"), calls: RecordingCalls()).value
                == .string("echo:before"))
        // Control bytes are written \u00XX: 3 MiB of them make an 18 MiB message.
        var big = invocation("echo")
        big.data = .string(String(repeating: "\u{01}", count: 3 << 20))
        await #expect { try await runtime.invoke(big, calls: RecordingCalls()) } throws: {
            ($0 as? RoostError)?.code == "script_data_too_large" && ($0 as? RoostError)?.status == 413
        }
        #expect(
            try await runtime.invoke(invocation("echo", argument: "after"), calls: RecordingCalls()).value
                == .string("echo:after"))
        #expect(lines.withLock { $0 }.isEmpty, "\(lines.withLock { $0 })")
        await runtime.shutdown()
    }

    @Test("owners take turns for the workers; one owner's waiting runs are capped, not everyone's")
    func turns() async throws {
        let runtime = try await runtime(timeout: 60, workers: 1, ownerQueueLimit: 2)
        func run(_ owner: String, _ argument: String, _ calls: any ScriptCallHandling = RecordingCalls())
            async throws -> String
        {
            var invocation = invocation("callThenEcho", argument: argument)
            invocation.owner = owner
            return try await runtime.invoke(invocation, calls: calls).value.stringValue ?? ""
        }
        let finished = Finished()
        let gate = GatedCalls()
        let holder = Task { try await run("user a", "a1", gate) }
        await gate.arrival()
        var runs: [Task<Void, any Error>] = []
        for (owner, argument) in [("user a", "a2"), ("user a", "a3"), ("user b", "b1")] {
            runs.append(Task { finished.append(try await run(owner, argument)) })
            #expect(await eventually(within: 30) { runtime.waiting == runs.count })
        }
        // A's third waiting run is over its share: 429, the caller's limit, not the server's.
        await #expect { try await run("user a", "a4") } throws: {
            ($0 as? RoostError)?.code == "too_many_script_runs" && ($0 as? RoostError)?.status == 429
        }
        gate.open()
        #expect(try await holder.value == "a1")
        for task in runs { try await task.value }
        #expect(finished.order == ["a2", "b1", "a3"])
        await runtime.shutdown()
    }

    @Test(
        "a committed write's runs past their owner's limit wait behind the owner's others instead of being refused"
    )
    func committedRunsWait() async throws {
        let runtime = try await runtime(timeout: 60, workers: 1, ownerQueueLimit: 2)
        func run(
            _ owner: String, _ argument: String, committed: Bool = false,
            _ calls: any ScriptCallHandling = RecordingCalls()
        )
            async throws -> String
        {
            var invocation = invocation("callThenEcho", argument: argument)
            invocation.owner = owner
            invocation.committed = committed
            return try await runtime.invoke(invocation, calls: calls).value.stringValue ?? ""
        }
        let finished = Finished()
        let gate = GatedCalls()
        let holder = Task { try await run("user a", "a1", gate) }
        await gate.arrival()
        var runs: [Task<Void, any Error>] = []
        for argument in ["a2", "a3"] {
            runs.append(Task { finished.append(try await run("user a", argument)) })
            #expect(await eventually(within: 30) { runtime.waiting == runs.count })
        }
        // Past A's share: POST-like runs wait (not counted as waiting in the shared queue)…
        for argument in ["c1", "c2"] {
            runs.append(Task { finished.append(try await run("user a", argument, committed: true)) })
        }
        // …another owner still queues, and A's refusable run is 429.
        runs.append(Task { finished.append(try await run("user b", "b1")) })
        #expect(await eventually(within: 30) { runtime.waiting == 3 })
        await #expect { try await run("user a", "a4") } throws: {
            ($0 as? RoostError)?.code == "too_many_script_runs"
        }
        gate.open()
        #expect(try await holder.value == "a1")
        for task in runs { try await task.value }
        // The two committed runs started together, so either may have parked first.
        #expect(finished.order.prefix(3) == ["a2", "b1", "a3"])
        #expect(Set(finished.order.suffix(2)) == ["c1", "c2"])
        await runtime.shutdown()
    }

    @Test(
        "a run that waited for a worker past the queue's bound is refused with 503 scripts_busy; the next runs"
    )
    func queueWaitSheds() async throws {
        let now = Atomic<UInt64>(1_000_000_000)
        let runtime = try await runtime(
            timeout: 60, workers: 1, queueWait: 2, monotonicNanoseconds: { now.load(ordering: .relaxed) })
        let gate = GatedCalls()
        async let first = runtime.invoke(invocation("callThenEcho", argument: "1"), calls: gate)
        await gate.arrival()
        let late = Task {
            try await runtime.invoke(invocation("echo", argument: "late"), calls: RecordingCalls())
        }
        #expect(await eventually(within: 30) { runtime.waiting == 1 })
        now.add(2_000_000_001, ordering: .relaxed)
        gate.open()
        #expect(try await first.value == .string("1"))
        await #expect { try await late.value } throws: {
            ($0 as? RoostError)?.code == "scripts_busy" && ($0 as? RoostError)?.status == 503
        }
        let next = try await runtime.invoke(invocation("echo", argument: "x"), calls: RecordingCalls())
        #expect(next.value == .string("echo:x"))
        await runtime.shutdown()
    }

    @Test("past the queue limit a run is refused at once with 503 scripts_busy")
    func fullQueue() async throws {
        let runtime = try await runtime(timeout: 60, workers: 1, queueLimit: 1)
        // One runs (held inside its first call until the gate opens), one waits; a third finds
        // the queue full.
        let gate = GatedCalls()
        async let first = runtime.invoke(invocation("callThenEcho", argument: "1"), calls: gate)
        await gate.arrival()
        async let second = runtime.invoke(invocation("callThenEcho", argument: "2"), calls: RecordingCalls())
        #expect(await eventually(within: 30) { runtime.waiting == 1 })
        await #expect { try await runtime.invoke(invocation("echo"), calls: RecordingCalls()) } throws: {
            ($0 as? RoostError)?.code == "scripts_busy" && ($0 as? RoostError)?.status == 503
        }
        gate.open()
        #expect(try await first.value == .string("1"))
        #expect(try await second.value == .string("2"))
        await runtime.shutdown()
    }
}

/// The order runs finished in.
final class Finished: Sendable {
    private let names = Mutex<[String]>([])
    var order: [String] { names.withLock { $0 } }
    func append(_ name: String) { names.withLock { $0.append(name) } }
}

/// An `ff` host whose calls wait until the test opens the gate: holds a worker without burning CPU.
final class GatedCalls: ScriptCallHandling {
    let gate = TestGate()

    var entered: Bool { gate.arrivals > 0 }
    func open() { gate.open() }
    /// Returns once a call has reached the gate.
    func arrival() async { await gate.arrival() }

    func call(_ method: String, arguments: [JSONValue]) async throws -> JSONValue {
        await gate.pass()
        return .null
    }

    func log(level: String, message: String) {}
}

/// An `ff` host whose calls ignore cancellation and wait for the gate: a data call that outlives
/// its script.
final class StubbornCalls: ScriptCallHandling {
    let gate = TestGate()
    private let done = Atomic<Bool>(false)

    var entered: Bool { gate.arrivals > 0 }
    var finished: Bool { done.load(ordering: .acquiring) }
    func open() { gate.open() }
    /// Returns once a call has reached the gate.
    func arrival() async { await gate.arrival() }

    func call(_ method: String, arguments: [JSONValue]) async throws -> JSONValue {
        await gate.pass()
        done.store(true, ordering: .releasing)
        return .null
    }

    func log(level: String, message: String) {}
}

/// The server side of `ff` calls for these tests: answers every call with `answer` and keeps what
/// it was asked and told.
final class RecordingCalls: ScriptCallHandling {
    let answer: JSONValue
    private let record = Mutex<(calls: [String], lines: [String])>(([], []))

    init(answer: JSONValue = .null) { self.answer = answer }

    var calls: [String] { record.withLock { $0.calls } }
    var lines: [String] { record.withLock { $0.lines } }

    func call(_ method: String, arguments: [JSONValue]) async throws -> JSONValue {
        record.withLock { $0.calls.append("\(method)(\(JSONWriter.string(.array(arguments))))") }
        return answer
    }

    func log(level: String, message: String) { record.withLock { $0.lines.append(message) } }
}
