import RoostHTTP
import RoostScripts

extension Logger: ScriptLog {
    public func scriptLine(level: String, _ text: String, requestID: String?, fields: [(String, String)]) {
        log(Level(name: level) ?? .info, text, requestID: requestID, fields: fields)
    }

    public func failure(_ text: String, requestID: String?) {
        error(text, requestID: requestID)
    }
}
