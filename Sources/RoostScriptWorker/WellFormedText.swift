/// Duktape keeps strings as CESU-8: a character beyond U+FFFF written as two `\u` escapes (or made
/// by `String.fromCharCode`) comes out of `JSON.stringify` as two 3-byte surrogates, which are not
/// UTF-8 and which the server refuses as a malformed frame. Text leaves the worker through here.
enum WellFormedText {
    /// `bytes` with each surrogate pair as the 4-byte UTF-8 of its character and each lone
    /// surrogate as U+FFFD; `bytes` itself when it holds none (the usual case, checked in one pass).
    static func utf8(_ bytes: [UInt8]) -> [UInt8] {
        guard let first = firstSurrogate(in: bytes) else { return bytes }
        var out = [UInt8]()
        out.reserveCapacity(bytes.count + 8)
        out.append(contentsOf: bytes[..<first])
        var index = first
        while index < bytes.count {
            guard let unit = surrogate(in: bytes, at: index) else {
                out.append(bytes[index])
                index += 1
                continue
            }
            if unit < 0xDC00, let low = surrogate(in: bytes, at: index + 3), low >= 0xDC00 {
                let scalar = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00)
                out += [
                    UInt8(0xF0 | (scalar >> 18)), UInt8(0x80 | ((scalar >> 12) & 0x3F)),
                    UInt8(0x80 | ((scalar >> 6) & 0x3F)), UInt8(0x80 | (scalar & 0x3F)),
                ]
                index += 6
            } else {
                out += [0xEF, 0xBF, 0xBD]
                index += 3
            }
        }
        return out
    }

    private static func firstSurrogate(in bytes: [UInt8]) -> Int? {
        bytes.withUnsafeBufferPointer { buffer in
            var index = 0
            while index + 2 < buffer.count {
                if buffer[index] == 0xED && buffer[index + 1] >= 0xA0 { return index }
                index += 1
            }
            return nil
        }
    }

    /// The UTF-16 code unit of the surrogate encoded at `index`, if one is.
    private static func surrogate(in bytes: [UInt8], at index: Int) -> UInt32? {
        guard index + 2 < bytes.count, bytes[index] == 0xED, (0xA0...0xBF).contains(bytes[index + 1]),
            (0x80...0xBF).contains(bytes[index + 2])
        else { return nil }
        return 0xD000 | UInt32(bytes[index + 1] & 0x3F) << 6 | UInt32(bytes[index + 2] & 0x3F)
    }
}
