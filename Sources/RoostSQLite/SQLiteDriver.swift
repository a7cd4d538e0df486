import RoostStore

extension Row: DatabaseRow {
    public func isNull(_ column: Int) -> Bool { isNull(Int32(column)) }
    public func text(_ column: Int) -> String? { text(Int32(column)) }
    public func integer(_ column: Int) -> Int64 { integer(Int32(column)) }
    public func bytes(_ column: Int) -> [UInt8] { bytes(Int32(column)) }
}

extension SQLiteConnection: SQLRunning {}
