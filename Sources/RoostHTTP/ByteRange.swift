/// A `Range: bytes=` request header (RFC 9110 section 14.1) resolved against a representation's size.
///
/// Numbers are ASCII digits only (no sign, no `+`, no spaces inside) and saturate instead of
/// overflowing, so no value a client sends can trap; every bound is clamped to the size.
public enum ByteRange: Equatable, Sendable {
    /// Send the whole representation: no range, several ranges, another unit, or a malformed one
    /// (which RFC 9110 lets a server ignore).
    case whole
    /// Send these bytes with 206.
    case part(Range<Int>)
    /// Answer 416: the range starts at or past the end (or asks for a last 0 bytes).
    case unsatisfiable

    /// Digits beyond this many saturate: no file is near 10^18 bytes.
    static let maxDigits = 18

    /// Resolves one `bytes=first-last`, `bytes=first-` or `bytes=-suffix` against `size` bytes.
    public init(header: String, size: Int) {
        // A size is a file's length; a negative one (never seen) is treated as empty, not a trap.
        let size = max(0, size)
        var text = Substring(header).trimmingSpaces()
        guard text.utf8.count > 6, text.prefix(6).lowercased() == "bytes=" else {
            self = .whole
            return
        }
        text = text.dropFirst(6).trimmingSpaces()
        guard !text.contains(","), let dash = text.firstIndex(of: "-") else {
            self = .whole
            return
        }
        let firstText = text[..<dash]
        let lastText = text[text.index(after: dash)...]
        if firstText.isEmpty {
            guard let suffix = Self.number(lastText) else {
                self = .whole
                return
            }
            self = suffix == 0 || size == 0 ? .unsatisfiable : .part((size - min(suffix, size))..<size)
            return
        }
        guard let first = Self.number(firstText) else {
            self = .whole
            return
        }
        if lastText.isEmpty {
            self = first < size ? .part(first..<size) : .unsatisfiable
            return
        }
        guard let last = Self.number(lastText), last >= first else {
            self = .whole
            return
        }
        guard first < size else {
            self = .unsatisfiable
            return
        }
        // `min` first: `last + 1` could overflow for a client's largest number.
        self = .part(first..<(min(last, size - 1) + 1))
    }

    /// A run of ASCII digits, saturated at 10^18; nil for anything else.
    static func number(_ text: Substring) -> Int? {
        guard !text.isEmpty else { return nil }
        var value = 0
        var digits = 0
        for byte in text.utf8 {
            guard byte >= 48 && byte <= 57 else { return nil }
            if value == 0 && byte == 48 { continue }
            digits += 1
            if digits <= maxDigits { value = value * 10 + Int(byte - 48) }
        }
        return digits > maxDigits ? 1_000_000_000_000_000_000 : value
    }
}
