import CRoostSystem
import RoostJSON
import RoostScriptProtocol

#if canImport(Glibc)
    import Glibc
#endif

/// One `roost script-worker` child and the server's end of its socket. Owned by exactly one pool
/// thread, which alone reads, writes and kills it.
final class ScriptWorkerProcess {
    let pid: pid_t
    let channel: ScriptChannel
    /// The module generation the worker has loaded; -1 before its first `load`.
    var generation = -1
    private var ended = false

    private init(pid: pid_t, descriptor: Int32) {
        self.pid = pid
        self.channel = ScriptChannel(descriptor: descriptor)
    }

    /// Starts a worker with an empty environment: scripts never see the server's (a database
    /// password may be in it).
    static func spawn(executable: String, arguments: [String]) throws(ScriptChannelError)
        -> ScriptWorkerProcess
    {
        var pair: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &pair) == 0
        else {
            throw ScriptChannelError(.system, "cannot make a socket for a script worker (errno \(errno))")
        }
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp: [UnsafeMutablePointer<CChar>?] = [strdup("LANG=C.UTF-8"), nil]
        defer {
            for pointer in argv { free(pointer) }
            for pointer in envp { free(pointer) }
        }
        var child: pid_t = 0
        let status = roost_spawn_with_channel(executable, argv, envp, pair[1], &child)
        close(pair[1])
        guard status == 0 else {
            close(pair[0])
            throw ScriptChannelError(
                .system,
                "cannot start the script worker '\(executable)': \(String(cString: strerror(status)))")
        }
        return ScriptWorkerProcess(pid: child, descriptor: pair[0])
    }

    /// Sends `load` and waits for the answer; a syntax error comes back as the `loadFailed` message.
    func load(modules: [String: String], generation: Int, memoryLimit: Int, deadline: UInt64)
        throws(ScriptChannelError) -> JSONObject
    {
        var sources = JSONObject()
        for (module, source) in modules.sorted(by: { $0.key < $1.key }) { sources[module] = .string(source) }
        try channel.send(
            JSONObject(uniqueMembers: [
                ("t", .string("load")), ("generation", .integer(Int64(generation))),
                ("memoryLimit", .integer(Int64(memoryLimit))), ("modules", .object(sources)),
            ]))
        let answer = try channel.receive(deadline: deadline)
        if answer["t"]?.stringValue == "loaded" { self.generation = generation }
        return answer
    }

    /// Kills the worker and reaps it; the socket is closed.
    func terminate() {
        guard !ended else { return }
        ended = true
        kill(pid, SIGKILL)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        close(channel.descriptor)
    }

    deinit { terminate() }
}
