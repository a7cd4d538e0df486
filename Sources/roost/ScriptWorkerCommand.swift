import RoostScriptWorker

/// `roost script-worker` (hidden): the process the server spawns to run scripts, speaking the
/// script frames on descriptor 3. Not for people; not in `--help`.
func scriptWorker() -> Int32 {
    ScriptWorker.hardenProcess()
    return ScriptWorker.run(descriptor: 3, exitOnChannelLoss: true)
}
