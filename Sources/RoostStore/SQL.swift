/// A value SQLite stores or returns.
public enum DatabaseValue: Sendable, Equatable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob([UInt8])
}

/// SQL text whose interpolated values become bound parameters, never text.
///
/// `"SELECT * FROM objects WHERE guid = \(guid)"` yields `... WHERE guid = ?` with `guid` bound.
/// Identifiers that cannot be parameters go through `\(raw:)`, which callers must only feed
/// with names they chose themselves.
public struct SQL: Sendable, ExpressibleByStringInterpolation {
    public private(set) var text: String
    public private(set) var arguments: [DatabaseValue]

    public init(stringLiteral value: String) {
        text = value
        arguments = []
    }

    public init(stringInterpolation: Interpolation) {
        text = stringInterpolation.text
        arguments = stringInterpolation.arguments
    }

    /// Joins two fragments, keeping their parameters in order.
    public static func + (lhs: SQL, rhs: SQL) -> SQL {
        var result = lhs
        result.text += rhs.text
        result.arguments += rhs.arguments
        return result
    }

    /// Fragments joined by a separator.
    public static func joined(_ parts: [SQL], separator: String) -> SQL {
        var result: SQL = ""
        for (position, part) in parts.enumerated() {
            if position > 0 { result.text += separator }
            result = result + part
        }
        return result
    }

    public struct Interpolation: StringInterpolationProtocol {
        var text = ""
        var arguments: [DatabaseValue] = []

        public init(literalCapacity: Int, interpolationCount: Int) {
            text.reserveCapacity(literalCapacity + interpolationCount * 2)
        }

        public mutating func appendLiteral(_ literal: String) { text += literal }

        public mutating func appendInterpolation(_ value: DatabaseValue) {
            text += "?"
            arguments.append(value)
        }

        public mutating func appendInterpolation(_ value: String) {
            appendInterpolation(DatabaseValue.text(value))
        }
        public mutating func appendInterpolation(_ value: Int64) {
            appendInterpolation(DatabaseValue.integer(value))
        }
        public mutating func appendInterpolation(_ value: Int) {
            appendInterpolation(DatabaseValue.integer(Int64(value)))
        }
        public mutating func appendInterpolation(_ value: [UInt8]) {
            appendInterpolation(DatabaseValue.blob(value))
        }

        public mutating func appendInterpolation(_ value: String?) {
            appendInterpolation(value.map(DatabaseValue.text) ?? .null)
        }
        public mutating func appendInterpolation(_ value: Int64?) {
            appendInterpolation(value.map(DatabaseValue.integer) ?? .null)
        }

        /// Appends another fragment with its parameters.
        public mutating func appendInterpolation(_ fragment: SQL) {
            text += fragment.text
            arguments += fragment.arguments
        }

        /// Appends text verbatim: only for identifiers and keywords chosen by Roost itself.
        public mutating func appendInterpolation(raw: String) { text += raw }
    }
}
