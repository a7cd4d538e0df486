import RoostServer

/// `roost serve` options for server-side scripts (handlers and extensions).
extension ServeOption {
    static let scripts: [ServeOption] = [
        ServeOption(
            flag: "--script-timeout", variable: "ROOST_SCRIPT_TIMEOUT", valueName: "SECONDS",
            help:
                "how long one handler or extension may run, its data calls included; past it the script's worker process is killed and the request answered 500 script_timeout (default 5, at most 300)"
        ) {
            $0.scripts.timeout = Double(try integer($1, flag: "--script-timeout", range: 1...300))
        },
        ServeOption(
            flag: "--script-memory", variable: "ROOST_SCRIPT_MEMORY", valueName: "SIZE",
            help:
                "the JavaScript heap one script worker may hold; a script that needs more is stopped with 500 script_memory (default 64MiB, from 4MiB to 4GiB)"
        ) {
            let bytes = try size($1, flag: "--script-memory")
            guard (4 << 20)...(4 << 30) ~= bytes else {
                throw UsageError(message: "--script-memory takes a size from 4MiB to 4GiB, not '\($1)'")
            }
            $0.scripts.memoryLimit = bytes
        },
        ServeOption(
            flag: "--script-workers", variable: "ROOST_SCRIPT_WORKERS", valueName: "N",
            help:
                "script worker processes, each running one script at a time; started when the app defines scripts (default: four per core, at most 64; a script mostly waits on its data calls)"
        ) {
            $0.scripts.workers = try integer($1, flag: "--script-workers", range: 1...256)
        },
        ServeOption(
            flag: "--script-runs-per-caller", variable: "ROOST_SCRIPT_RUNS_PER_CALLER", valueName: "N",
            help:
                "extension calls one user (or one address, for anonymous callers) may have in progress; more are answered 429 too_many_script_runs (default: half the script workers, at least 2)"
        ) {
            $0.scripts.runsPerCaller = try integer($1, flag: "--script-runs-per-caller", range: 1...1024)
        },
        ServeOption(
            flag: "--script-user", variable: "ROOST_SCRIPT_USER", valueName: "NAME",
            help:
                "the user script workers run as when the server is started as root (default nobody); a name the system does not know fails the start. A server started as another user runs them as itself"
        ) {
            guard ScriptOptions.isKnownWorkerUser($1) else {
                throw UsageError(message: "--script-user names no user of this system (or root): '\($1)'")
            }
            $0.scripts.user = $1
        },
    ]
}
