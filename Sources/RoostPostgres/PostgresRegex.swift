import RoostQuery

/// Rewrites a query's regular expression (ICU syntax, as NSRegularExpression reads it for SQLite)
/// into a PostgreSQL advanced regular expression that finds the same matches.
///
/// What differs between the two is rewritten: ICU's `.` does not match line terminators and its
/// `$` also matches before a final one; `\b` is `\y` in PostgreSQL; `\z` is `\Z`. What PostgreSQL
/// cannot express (Unicode properties, possessive and atomic groups, named groups, flags after the
/// start, nested sets, counts above 255) is refused with a clear error instead of answering
/// differently. Character classes (`\d`, `\w`, `\s`) and case folding under `(?i)` are
/// PostgreSQL's under the `roost_regex` collation: ICU's Unicode properties where the server has
/// ICU (as Debian's does), ASCII only where it has not.
enum PostgresRegex {
    /// PostgreSQL's limit on `{n,m}` counts (RE_DUP_MAX).
    static let maximumRepeatCount = 255

    /// Line terminators as ICU knows them.
    private static let lineTerminators = "\\n\\r\\u0085\\u2028\\u2029"

    static func translate(_ pattern: String) throws(QueryError) -> String {
        var characters = Array(pattern.unicodeScalars)
        var output = ""
        var dotMatchesAll = false
        // Leading flags, the only place PostgreSQL accepts them.
        if characters.starts(with: "(?".unicodeScalars), let close = characters.firstIndex(of: ")") {
            let flags = String(String.UnicodeScalarView(characters[2..<close]))
            if !flags.isEmpty, flags.allSatisfy({ "is".contains($0) }) {
                if flags.contains("i") { output += "(?i)" }
                dotMatchesAll = flags.contains("s")
                characters.removeSubrange(0...close)
            }
        }
        var index = 0
        func refuse(_ what: String) -> QueryError {
            QueryError(
                message: "this database cannot run \(what) in a regular expression", column: 1, query: "",
                expected: ["regular expression"])
        }
        func peek(_ offset: Int = 0) -> Unicode.Scalar? {
            index + offset < characters.count ? characters[index + offset] : nil
        }
        while index < characters.count {
            let character = characters[index]
            switch character {
            case "\\":
                output += try escape(characters, &index, inSet: false, refuse)
                continue
            case ".":
                output += dotMatchesAll ? "(?:.|\\n)" : "[^\(lineTerminators)]"
            case "$":
                output += "(?=(?:\\r\\n|[\(lineTerminators)])?$)"
            case "[":
                output += try set(&characters, &index, refuse)
                continue
            case "(":
                if peek(1) == "?" {
                    let kind = peek(2)
                    if kind == ":" || kind == "=" || kind == "!" {
                        output += "(?" + String(kind!)
                        index += 3
                        continue
                    }
                    if kind == "<", peek(3) == "=" || peek(3) == "!" {
                        output += "(?<" + String(peek(3)!)
                        index += 4
                        continue
                    }
                    if kind == "#" {
                        while index < characters.count, characters[index] != ")" { index += 1 }
                        index += 1
                        continue
                    }
                    throw refuse(
                        kind == ">" ? "an atomic group" : kind == "<" ? "a named group" : "inline flags")
                }
                output += "("
            case "*", "+", "?", "}":
                output += String(character)
                if peek(1) == "+" { throw refuse("a possessive quantifier") }
            case "{":
                var digits = ""
                var scan = index + 1
                while scan < characters.count, characters[scan] != "}" {
                    digits.unicodeScalars.append(characters[scan])
                    scan += 1
                }
                for count in digits.split(separator: ",") where (Int(count) ?? 0) > maximumRepeatCount {
                    throw refuse("a counted repeat above {\(maximumRepeatCount)}")
                }
                output += "{"
            default:
                output.unicodeScalars.append(character)
            }
            index += 1
        }
        return output
    }

    /// The escape at `index` (a backslash), outside or inside a set; moves `index` past it.
    private static func escape(
        _ characters: [Unicode.Scalar], _ index: inout Int, inSet: Bool, _ refuse: (String) -> QueryError
    ) throws(QueryError) -> String {
        guard index + 1 < characters.count else { throw refuse("a trailing backslash") }
        let code = characters[index + 1]
        index += 2
        if code == "u" || code == "x" {
            // \uhhhh, \xhh and \x{h…}: one code point, written as PostgreSQL's \Uhhhhhhhh.
            var hex = ""
            if code == "x", index < characters.count, characters[index] == "{" {
                index += 1
                while index < characters.count, characters[index] != "}" {
                    hex.unicodeScalars.append(characters[index])
                    index += 1
                }
                index += 1
            } else {
                let length = code == "u" ? 4 : 2
                while hex.count < length, index < characters.count,
                    characters[index].properties.isASCIIHexDigit
                {
                    hex.unicodeScalars.append(characters[index])
                    index += 1
                }
            }
            guard let value = UInt32(hex, radix: 16), value <= 0x10FFFF, !hex.isEmpty else {
                throw refuse("this \\\(code) escape")
            }
            let digits = String(value, radix: 16)
            return "\\U" + String(repeating: "0", count: 8 - digits.count) + digits
        }
        if inSet, "DWS".unicodeScalars.contains(code) { throw refuse("\\\(code) inside a set") }
        switch code {
        case "d", "D", "w", "W", "s", "S", "n", "r", "t", "f", "e", "a": return "\\" + String(code)
        case "b": return inSet ? "\\b" : "\\y"
        case "B": return "\\Y"
        case "A": return "\\A"
        case "z": return "\\Z"
        case "Z": return "(?=(?:\\r\\n|[\(lineTerminators)])?$)"
        case "1"..."9": return "\\" + String(code)
        default:
            if code.properties.isAlphabetic || ("0"..."9").contains(code) {
                throw refuse("\\\(code)")
            }
            // An escaped symbol is that symbol in both.
            return "\\" + String(code)
        }
    }

    /// A bracket expression, which ICU and PostgreSQL read alike when it holds no nested set,
    /// no `&&` and no POSIX class; the escapes inside are rewritten like those outside.
    private static func set(
        _ characters: inout [Unicode.Scalar], _ index: inout Int, _ refuse: (String) -> QueryError
    ) throws(QueryError) -> String {
        var output = "["
        index += 1
        if index < characters.count, characters[index] == "^" {
            output += "^"
            index += 1
        }
        if index < characters.count, characters[index] == "]" { throw refuse("']' first in a set") }
        while index < characters.count {
            let character = characters[index]
            switch character {
            case "]":
                index += 1
                return output + "]"
            case "[": throw refuse("a nested set")
            case "&" where index + 1 < characters.count && characters[index + 1] == "&":
                throw refuse("a set intersection")
            case "\\":
                output += try escape(characters, &index, inSet: true, refuse)
                continue
            default:
                output.unicodeScalars.append(character)
            }
            index += 1
        }
        throw refuse("an unterminated set")
    }
}
