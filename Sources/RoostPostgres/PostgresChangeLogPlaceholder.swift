import RoostStore

// TEMPORARY (pg-blobs branch): main at f66f4fc does not build because `Storage` gained
// `changeLog` (realtime) while `PostgresStorage` has none yet. This empty log only lets the
// blob work build and test; delete this file when the real PostgreSQL change log is merged.
extension PostgresStorage {
    public var changeLog: any ChangeLog { PostgresEmptyChangeLog() }
}

struct PostgresEmptyChangeLog: ChangeLog {
    func changes(after sequence: Int64, limit: Int, maxBytes: Int) async throws -> [Change] { [] }
    func window() async throws -> ChangeWindow { ChangeWindow(trimmedThrough: 0, last: 0) }
    func trim(_ retention: ChangeRetention, now: Int64, batch: Int) async throws -> Int { 0 }
    func observeCommits(_ observer: @escaping @Sendable () -> Void) {}
}
