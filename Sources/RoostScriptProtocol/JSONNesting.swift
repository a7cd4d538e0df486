/// How deeply JSON text nests, read without parsing it: what decides whether a frame fits the
/// channel's ``ScriptChannel/maximumDepth`` before it is sent.
public enum JSONNesting {
    /// The deepest nesting of arrays and objects in `text` (0 for a scalar), counting brackets
    /// outside strings. Text that is not JSON gives some number; the parser judges it anyway.
    public static func depth(of text: [UInt8]) -> Int {
        var depth = 0
        var deepest = 0
        var inString = false
        var escaped = false
        for byte in text {
            if inString {
                if escaped {
                    escaped = false
                } else if byte == UInt8(ascii: "\\") {
                    escaped = true
                } else if byte == UInt8(ascii: "\"") {
                    inString = false
                }
                continue
            }
            switch byte {
            case UInt8(ascii: "\""): inString = true
            case UInt8(ascii: "["), UInt8(ascii: "{"):
                depth += 1
                deepest = max(deepest, depth)
            case UInt8(ascii: "]"), UInt8(ascii: "}"): depth -= 1
            default: break
            }
        }
        return deepest
    }
}
