/// Where scripts' log lines and the server's reports on their handlers go: the server's logger,
/// which conforms where it lives (RoostServer), so the scripts domain needs no HTTP module.
public protocol ScriptLog: Sendable {
    /// A line a script wrote, at the level it names (`debug`, `info`, `warn`, `error`; any other
    /// name as `info`).
    func scriptLine(level: String, _ text: String, requestID: String?, fields: [(String, String)])
    /// A failure the server reports itself, after the request it belongs to was answered.
    func failure(_ text: String, requestID: String?)
}
