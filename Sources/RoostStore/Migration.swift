import Foundation

/// This build's version, recorded in every database it opens (`roost_meta.written_by`).
public enum RoostRelease {
    public static let version = "0.1.0"
}

/// One step of the schema, applied once and recorded in `roost_schema`.
public struct Migration: Sendable {
    public let version: Int
    public let name: String
    public let sql: String
    /// Rows Swift derives after `sql` ran, in the same transaction (see ``MigrationStep``).
    public let step: (any MigrationStep)?

    public init(version: Int, name: String, sql: String, then step: (any MigrationStep)? = nil) {
        self.version = version
        self.name = name
        self.sql = sql
        self.step = step
    }
}

/// The part of a migration SQL should not do: rows derived from documents, computed as the
/// stores compute them before a write (so no SQL parses JSON that Swift already reads).
public protocol MigrationStep: Sendable {
    func run<Connection: SQLConnection>(on connection: Connection) throws
}

/// Where a database's schema stands against the migrations this build knows.
public struct SchemaStatus: Sendable {
    /// Migration versions recorded in the database, ascending.
    public let applied: [Int]
    /// Known migrations not yet applied, in the order they would run.
    public let pending: [Migration]
    /// Recorded versions this build has no migration for: a newer build wrote them.
    public let unknown: [Int]
    /// The version of Roost that last opened the database for writing, when recorded.
    public let writtenBy: String?
    /// The highest migration version this build knows.
    public let knownVersion: Int

    public init(applied: [Int], pending: [Migration], unknown: [Int], writtenBy: String?, knownVersion: Int) {
        self.applied = applied
        self.pending = pending
        self.unknown = unknown
        self.writtenBy = writtenBy
        self.knownVersion = knownVersion
    }

    /// The highest version recorded in the database; 0 for a new one.
    public var version: Int { applied.last ?? 0 }

    /// Why this build must not open the database at `path`: it holds migrations the build does
    /// not know. Nil when it may.
    public func refusal(path: String) -> SchemaTooNewError? {
        guard !unknown.isEmpty else { return nil }
        return SchemaTooNewError(
            path: path, databaseVersion: version, knownVersion: knownVersion, writtenBy: writtenBy)
    }
}

/// A database whose schema has migrations this build does not know: opening it could corrupt
/// what a newer build wrote, so it is refused.
public struct SchemaTooNewError: Error, Sendable, CustomStringConvertible {
    public let path: String
    public let databaseVersion: Int
    public let knownVersion: Int
    public let writtenBy: String?

    public var description: String {
        "the database \(path) has schema version \(databaseVersion)"
            + (writtenBy.map { " (last written by roost \($0))" } ?? "")
            + ", but roost \(RoostRelease.version) knows schema versions up to \(knownVersion). "
            + "Run a roost at least as new as the one that wrote it, or restore a backup made by this version."
    }
}
