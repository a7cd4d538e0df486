import Foundation
import RoostCore
import RoostStore
import RoostTestSupport
import Testing

@testable import RoostPostgres

/// Runs `body` with a fresh database migrated for blobs and a factory of blob storages on it,
/// each in a data folder of its own (removed afterwards) and closed afterwards.
func withBlobDatabase<T>(
    _ body: (PostgresTestDatabase, _ makeStorage: (Int) throws -> PostgresBlobStorage) async throws -> T
) async throws -> T {
    try await PostgresTestDatabase.with { test in
        let migrating = try PostgresDatabase(
            configuration: test.configuration, migrations: PostgresBlobStorage.migrations)
        await migrating.close()
        var made: [(PostgresBlobStorage, String)] = []
        defer {
            for (storage, folder) in made {
                storage.close()
                try? FileManager.default.removeItem(atPath: folder)
            }
        }
        return try await body(test) { cacheBytes in
            let folder = FileManager.default.temporaryDirectory
                .appendingPathComponent("roost-pg-blobs-\(UUID().uuidString.prefix(8))").path
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            let storage = try PostgresBlobStorage(
                dataDirectory: folder, configuration: test.configuration, cacheBytes: cacheBytes)
            made.append((storage, folder))
            return storage
        }
    }
}

/// Runs blocking `work` on a thread of its own, as the blob I/O workers do, never on Swift's
/// cooperative threads.
func onThread<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try work() }) }.start()
    }
}

/// `count` bytes of a pattern that differs from chunk to chunk (a misplaced chunk shows).
func blobBytes(_ count: Int, seed: UInt64 = 1) -> [UInt8] {
    var state = seed &* 0x9E37_79B9_7F4A_7C15 | 1
    return (0..<count).map { _ in
        state ^= state << 13
        state ^= state >> 7
        state ^= state << 17
        return UInt8(truncatingIfNeeded: state)
    }
}

func sha256Hex(_ bytes: [UInt8]) -> String {
    let digest = StreamingDigest()
    digest.update(bytes[...])
    return Sodium.hex(digest.finish())
}

/// Writes `bytes` to a temporary file of `storage` and adopts it, as an upload does; the digest.
@discardableResult
func upload(_ bytes: [UInt8], to storage: PostgresBlobStorage) async throws -> String {
    let sha256 = sha256Hex(bytes)
    try await onThread {
        let (path, descriptor) = try storage.makeTemporaryFile()
        try writeAll(descriptor, bytes)
        close(descriptor)
        try storage.adopt(temporaryFile: path, sha256: sha256)
    }
    return sha256
}

func writeAll(_ descriptor: Int32, _ bytes: [UInt8]) throws {
    var offset = 0
    try bytes.withUnsafeBytes { buffer in
        while offset < buffer.count {
            let written = write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
            guard written > 0 else { throw StoreError.io("test write failed") }
            offset += written
        }
    }
}

/// The blob's bytes through `open`, as the HTTP layer reads them (from the descriptor); nil
/// when it is not stored.
func download(_ sha256: String, from storage: PostgresBlobStorage) async throws -> [UInt8]? {
    try await onThread { () -> [UInt8]? in
        guard let (descriptor, size) = try storage.open(sha256) else { return nil }
        defer { close(descriptor) }
        var bytes = [UInt8](repeating: 0, count: size)
        var offset = 0
        try bytes.withUnsafeMutableBytes { buffer in
            while offset < size {
                let count = pread(descriptor, buffer.baseAddress! + offset, size - offset, off_t(offset))
                guard count > 0 else { throw StoreError.io("test read failed at \(offset) of \(size)") }
                offset += count
            }
        }
        return bytes
    }
}

/// Rows of the blob tables, counted on a connection of the test's own.
func blobRowCounts(_ test: PostgresTestDatabase, _ sha256: String) async throws -> (files: Int, chunks: Int) {
    let database = try PostgresDatabase(configuration: test.configuration, migrations: [])
    do {
        let counts = try await database.read { connection in
            let files = try connection.first("SELECT count(*) FROM blob_files WHERE sha256 = \(sha256)") {
                Int($0.integer(0))
            }
            let chunks = try connection.first("SELECT count(*) FROM blob_chunks WHERE sha256 = \(sha256)") {
                Int($0.integer(0))
            }
            return (files ?? 0, chunks ?? 0)
        }
        await database.close()
        return counts
    } catch {
        await database.close()
        throw error
    }
}

/// The names in a folder (sorted).
func fileNames(in folder: String) -> [String] {
    ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).sorted()
}

/// This process's resident memory in bytes (VmRSS).
func residentBytes() -> Int {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
        let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") })
    else { return 0 }
    return (Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0) * 1024
}
