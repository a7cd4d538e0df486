import CSQLite
import Foundation

/// SQL functions Roost adds to every connection.
enum SQLiteFunctions {
    /// `value REGEXP pattern`, with NSRegularExpression; each statement compiles its pattern once.
    static func register(on handle: OpaquePointer?) {
        sqlite3_create_function_v2(
            handle, "regexp", 2, SQLITE_UTF8 | SQLITE_DETERMINISTIC, nil,
            { context, _, arguments in
                guard let arguments, let patternText = sqlite3_value_text(arguments[0]),
                    let valueText = sqlite3_value_text(arguments[1])
                else {
                    sqlite3_result_int(context, 0)
                    return
                }
                let regex: NSRegularExpression
                if let cached = sqlite3_get_auxdata(context, 0) {
                    regex = Unmanaged<NSRegularExpression>.fromOpaque(cached).takeUnretainedValue()
                } else {
                    guard let compiled = try? NSRegularExpression(pattern: String(cString: patternText))
                    else {
                        sqlite3_result_error(context, "invalid regular expression", -1)
                        return
                    }
                    regex = compiled
                    sqlite3_set_auxdata(context, 0, Unmanaged.passRetained(compiled).toOpaque()) { pointer in
                        if let pointer { Unmanaged<NSRegularExpression>.fromOpaque(pointer).release() }
                    }
                }
                let value = String(cString: valueText)
                let found = regex.firstMatch(in: value, range: NSRange(value.startIndex..., in: value)) != nil
                sqlite3_result_int(context, found ? 1 : 0)
            }, nil, nil, nil)
    }
}
