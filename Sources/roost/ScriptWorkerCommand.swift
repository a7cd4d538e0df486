import CRoostSystem
import RoostScriptWorker

#if canImport(Glibc)
    import Glibc
#endif

/// `roost script-worker [--uid N --gid N] [--address-space BYTES]` (hidden): the process the
/// server spawns to run scripts, speaking the script frames on descriptor 3. Not for people; not
/// in `--help`. It confines itself before it reads a frame (see `roost_worker_sandbox`) and
/// refuses to run unconfined.
func scriptWorker() -> Int32 {
    ScriptWorker.hardenProcess()
    var uid = -1
    var gid = -1
    var addressSpace: UInt64 = 0
    var rest = Array(CommandLine.arguments.dropFirst(2))[...]
    while let flag = rest.popFirst() {
        guard let value = rest.popFirst(), let number = UInt64(value) else { return 64 }
        switch flag {
        case "--uid" where number <= UInt32.max: uid = Int(number)
        case "--gid" where number <= UInt32.max: gid = Int(number)
        case "--address-space": addressSpace = number
        default: return 64
        }
    }
    guard (uid < 0) == (gid < 0) else { return 64 }
    // Nothing to report it on but the exit status: standard error is the server's no more.
    guard roost_worker_sandbox(uid, gid, addressSpace, 3) == 0 else { return 70 }
    return ScriptWorker.run(descriptor: 3, exitOnChannelLoss: true)
}
