import Foundation

/// Regular expressions whose cost is bounded: patterns are checked when a query is parsed, and a
/// match gives up when its time runs out instead of backtracking for minutes.
public enum BoundedRegex {
    /// The longest pattern a query may carry, in characters.
    public static let maximumPatternLength = 256
    /// The largest count in `{n}`, `{n,}` or `{n,m}`; ICU unrolls counted repeats when compiling.
    public static let maximumRepeatCount = 1000
    /// How long one match may run when no read budget applies (rules evaluated in memory).
    public static let defaultMatchTime: Duration = .milliseconds(100)

    /// Why a pattern was refused, in a sentence; nil when it is acceptable.
    public static func problem(with pattern: String) -> String? {
        guard pattern.count <= maximumPatternLength else {
            return "a regular expression may have at most \(maximumPatternLength) characters"
        }
        if let count = largestRepeatCount(in: pattern), count > maximumRepeatCount {
            return "a counted repeat in a regular expression may be at most {\(maximumRepeatCount)}"
        }
        guard (try? NSRegularExpression(pattern: pattern)) != nil else {
            return "'\(pattern.prefix(60))' is not a valid regular expression"
        }
        return nil
    }

    /// The outcome of a match that may have run out of time.
    public enum Outcome: Sendable, Equatable {
        case matched, notMatched, outOfTime
    }

    /// Whether `regex` finds a match in `value`, giving up once `stop()` answers true (asked
    /// periodically while ICU backtracks).
    public static func firstMatch(
        _ regex: NSRegularExpression, in value: String, stop shouldStop: () -> Bool
    ) -> Outcome {
        // Foundation declares the block escaping, but calls it only during the enumeration.
        withoutActuallyEscaping(shouldStop) { shouldStop in
            var outcome = Outcome.notMatched
            regex.enumerateMatches(
                in: value, options: [.reportProgress], range: NSRange(value.startIndex..., in: value)
            ) { result, _, stop in
                if result != nil {
                    outcome = .matched
                    stop.pointee = true
                } else if shouldStop() {
                    outcome = .outOfTime
                    stop.pointee = true
                }
            }
            return outcome
        }
    }

    /// A match limited to ``defaultMatchTime``; running out of time counts as no match.
    public static func matches(_ regex: NSRegularExpression, _ value: String) -> Bool {
        let deadline = ContinuousClock.now + defaultMatchTime
        return firstMatch(regex, in: value) { ContinuousClock.now >= deadline } == .matched
    }

    /// The largest number inside `{…}` quantifiers, ignoring escaped braces.
    private static func largestRepeatCount(in pattern: String) -> Int? {
        var largest: Int?
        var digits = ""
        var inBraces = false
        var escaped = false
        for character in pattern {
            if escaped {
                escaped = false
                continue
            }
            switch character {
            case "\\": escaped = true
            case "{":
                inBraces = true
                digits = ""
            case "}", ",":
                if inBraces, let value = Int(digits.prefix(9)) { largest = max(largest ?? 0, value) }
                if digits.count > 9 { largest = Int.max }
                digits = ""
                if character == "}" { inBraces = false }
            default:
                if inBraces, character.isASCII, character.isNumber { digits.append(character) }
            }
        }
        return largest
    }
}
