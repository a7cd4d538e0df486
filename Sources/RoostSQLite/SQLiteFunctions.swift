import CSQLite
import Foundation
import RoostStore

/// SQL functions Roost adds to every connection.
enum SQLiteFunctions {
    /// `value REGEXP pattern`, with NSRegularExpression; each statement compiles its pattern once.
    /// A match stops when the connection's read budget runs out (or after
    /// ``BoundedRegex/defaultMatchTime`` without one) and fails the statement with SQLITE_INTERRUPT.
    static func register(on handle: OpaquePointer?, connection: SQLiteConnection) {
        sqlite3_create_function_v2(
            handle, "regexp", 2, SQLITE_UTF8 | SQLITE_DETERMINISTIC,
            Unmanaged.passUnretained(connection).toOpaque(),
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
                    let pattern = String(cString: patternText)
                    guard BoundedRegex.problem(with: pattern) == nil,
                        let compiled = try? NSRegularExpression(pattern: pattern)
                    else {
                        sqlite3_result_error(context, "invalid regular expression", -1)
                        return
                    }
                    regex = compiled
                    sqlite3_set_auxdata(context, 0, Unmanaged.passRetained(compiled).toOpaque()) { pointer in
                        if let pointer { Unmanaged<NSRegularExpression>.fromOpaque(pointer).release() }
                    }
                }
                // The connection outlives its functions: they go when its handle closes.
                let connection = sqlite3_user_data(context).map {
                    Unmanaged<SQLiteConnection>.fromOpaque($0).takeUnretainedValue()
                }
                let hasBudget = connection?.budget != nil
                let fallback = ContinuousClock.now + BoundedRegex.defaultMatchTime
                let outcome = BoundedRegex.firstMatch(regex, in: String(cString: valueText)) {
                    hasBudget ? connection!.budgetIsSpent() : ContinuousClock.now >= fallback
                }
                switch outcome {
                case .matched: sqlite3_result_int(context, 1)
                case .notMatched: sqlite3_result_int(context, 0)
                case .outOfTime: sqlite3_result_error_code(context, SQLITE_INTERRUPT)
                }
            }, nil, nil, nil)
    }
}
