import CLibPQ
import RoostStore

/// A result row, valid only inside the mapping closure. Columns arrive in PostgreSQL's text form.
public struct PostgresRow: DatabaseRow {
    let result: OpaquePointer
    let row: Int32

    /// Whether the column is NULL.
    public func isNull(_ column: Int) -> Bool { PQgetisnull(result, row, Int32(column)) != 0 }

    /// The column as text, or nil for NULL.
    public func text(_ column: Int) -> String? {
        guard !isNull(column), let value = PQgetvalue(result, row, Int32(column)) else { return nil }
        return String(cString: value)
    }

    /// The column as an integer: int2/int4/int8, bool (0 or 1), numeric or float text (truncated);
    /// 0 for NULL.
    public func integer(_ column: Int) -> Int64 {
        guard let text = text(column) else { return 0 }
        if let value = Int64(text) { return value }
        if text == "t" { return 1 }
        if text == "f" { return 0 }
        guard let value = Double(text), value.isFinite, abs(value) < 9.2e18 else { return 0 }
        return Int64(value)
    }

    /// The column as a floating-point number; 0 for NULL.
    public func double(_ column: Int) -> Double {
        guard let text = text(column) else { return 0 }
        switch text {
        case "Infinity": return .infinity
        case "-Infinity": return -.infinity
        default: return Double(text) ?? 0
        }
    }

    /// The column's bytes: bytea decoded, any other type as its UTF-8 text; [] for NULL.
    public func bytes(_ column: Int) -> [UInt8] {
        guard !isNull(column), let value = PQgetvalue(result, row, Int32(column)) else { return [] }
        let length = Int(PQgetlength(result, row, Int32(column)))
        let raw = UnsafeRawBufferPointer(start: value, count: length)
        guard PQftype(result, Int32(column)) == PostgresType.bytea else { return Array(raw) }
        return Self.decodeHexBytea(raw) ?? Array(raw)
    }

    /// The column as a boolean: `t`, or a non-zero number; false for NULL.
    public func bool(_ column: Int) -> Bool {
        guard let text = text(column) else { return false }
        if text == "t" || text == "true" { return true }
        return integer(column) != 0
    }

    /// bytea's hex output (`\x` then two digits a byte); nil for the legacy escape format.
    static func decodeHexBytea(_ text: UnsafeRawBufferPointer) -> [UInt8]? {
        guard text.count >= 2, text[0] == UInt8(ascii: "\\"), text[1] == UInt8(ascii: "x"),
            text.count % 2 == 0
        else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity((text.count - 2) / 2)
        var index = 2
        while index < text.count {
            guard let high = hexValue(text[index]), let low = hexValue(text[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
            index += 2
        }
        return bytes
    }

    private static func hexValue(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return digit - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}

/// The type OIDs Roost binds values with (from PostgreSQL's pg_type.dat; they never change).
enum PostgresType {
    static let bytea: Oid = 17
    static let int8: Oid = 20
    static let text: Oid = 25
    static let float8: Oid = 701
}
