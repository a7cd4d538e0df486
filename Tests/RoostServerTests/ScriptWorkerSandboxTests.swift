import Foundation
import RoostCore
import RoostJSON
import RoostScripts
import RoostTestSupport
import Testing

/// Issue 24, item 15: a script worker confines itself before it runs a script: another user
/// when the server is root, a seccomp filter, a cap on its address space, and no standard error.
@Suite("Script workers' confinement")
struct ScriptWorkerSandboxTests {
    static let modules = [
        "scripts/sandbox": """
        var ff = require('ffef/FatFractal');
        exports.work = function (argument) {
            print('working');
            var found = ff.getObjFromUrl('/ff/resources/Celebrity/abc');
            var parts = []; for (var i = 0; i < 100000; i++) parts.push({n: i, s: 'x' + i});
            return [found.name, parts.length, JSON.stringify(parts).length > 0, new Date().getTime() > 0];
        };
        // Doubling reaches the heap's limit in about 25 steps, so the limit (not the timeout)
        // stops it however slow the machine is (100 KB steps took over 60 s under the suite's load).
        exports.bomb = function () { var s = 'x', a = []; while (true) { s = s + s; a.push(s); } };
        """
    ]

    func runtime(memory: Int = 32 << 20) async throws -> ScriptRuntime {
        var configuration = ScriptRuntime.Configuration(
            workerExecutable: try RoostProcess.binaryPath(), workers: 1)
        configuration.timeout = 60
        configuration.memoryLimit = memory
        let runtime = ScriptRuntime(configuration: configuration, log: { _ in })
        try await runtime.load(Self.modules)
        return runtime
    }

    func invocation(_ function: String) -> ScriptInvocation {
        ScriptInvocation(
            kind: .run, name: function, entry: ScriptEntry(module: "scripts/sandbox", function: function),
            argument: "", data: .null, context: JSONObject())
    }

    /// A line of `/proc/<pid>/status` or `/proc/<pid>/limits`, split into its fields.
    func fields(_ file: String, of pid: Int32, _ key: String) throws -> [String] {
        let text = try String(contentsOfFile: "/proc/\(pid)/\(file)", encoding: .utf8)
        let line = try #require(text.split(separator: "\n").first { $0.hasPrefix(key) })
        return line.dropFirst(key.count).split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
    }

    @Test(
        "a worker runs under seccomp (mode 2), not as root, with its address space capped and no fd 2; scripts still run"
    )
    func confined() async throws {
        let runtime = try await runtime()
        let calls = RecordingCalls(answer: .object(JSONObject(uniqueMembers: [("name", .string("Ada"))])))
        let outcome = try await runtime.invoke(invocation("work"), calls: calls)
        #expect(outcome.value == .array([.string("Ada"), .integer(100000), .bool(true), .bool(true)]))
        let pid = try #require(runtime.workerProcessIDs.first)

        #expect(try fields("status", of: pid, "Seccomp:") == ["2"])
        #expect(try fields("status", of: pid, "NoNewPrivs:") == ["1"])
        let uids = try fields("status", of: pid, "Uid:")
        if geteuid() == 0 {
            let nobody = ScriptWorkerUser.nobody
            #expect(uids == Array(repeating: "\(nobody.uid)", count: 4))
            #expect(try fields("status", of: pid, "Gid:") == Array(repeating: "\(nobody.gid)", count: 4))
            #expect(try fields("status", of: pid, "Groups:").isEmpty)
            #expect(try fields("status", of: pid, "CapEff:") == ["0000000000000000"])
        } else {
            #expect(uids.first == "\(geteuid())")
        }
        let descriptors = try FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd").sorted()
        #expect(descriptors == ["0", "1", "3"])
        let limit = try fields("limits", of: pid, "Max address space")
        #expect(
            limit.prefix(2) == [
                "\(runtime.configuration.addressSpaceLimit)", "\(runtime.configuration.addressSpaceLimit)",
            ])

        // Confined, the worker still stops a memory bomb at its heap's limit and runs on.
        await #expect { try await runtime.invoke(invocation("bomb"), calls: RecordingCalls()) } throws: {
            ($0 as? RoostError)?.code == "script_memory"
        }
        let again = try await runtime.invoke(invocation("work"), calls: calls)
        #expect(again.value == outcome.value)
        await runtime.shutdown()
    }
}
