import Foundation
import RoostStore

/// Removes blob files nothing refers to: `roost blobs gc`, and the server's hourly sweep.
public struct BlobCollector: Sendable {
    /// What a collection found and did.
    public struct Report: Sendable, Equatable {
        public var removedBlobs = 0
        public var removedBytes = 0
        public var keptBlobs = 0
        public var abandonedUploads = 0
    }

    let storage: any BlobStorage
    let references: SQLiteObjectStore
    /// Walking the blob folders blocks; it runs here, not on Swift's cooperative threads.
    let io: BackgroundWorkers

    public init(storage: any BlobStorage, references: SQLiteObjectStore, io: BackgroundWorkers) {
        self.storage = storage
        self.references = references
        self.io = io
    }

    /// Removes unreferenced blobs older than `minimumAge` seconds (younger ones may be an upload
    /// between its rename and its commit) and temporary files of dead processes. `progress` gets
    /// each removed blob's count so far and the total to remove; `dryRun` removes nothing.
    public func collect(
        minimumAge: TimeInterval, dryRun: Bool = false,
        progress: (Int, Int, StoredBlob) -> Void = { _, _, _ in }
    ) async throws -> Report {
        // Files first, references second: a blob adopted in between is referenced by then.
        let storage = self.storage
        let files = try await io.run { Result { try storage.stored() } }.get()
        let referenced = try await references.referencedBlobs()
        let cutoff = Date().addingTimeInterval(-minimumAge)
        let unreferenced = files.filter { !referenced.contains($0.sha256) && $0.modified <= cutoff }
        var report = Report(keptBlobs: files.count - unreferenced.count)
        for (index, blob) in unreferenced.enumerated() {
            if !dryRun { try storage.remove(blob.sha256) }
            report.removedBlobs += 1
            report.removedBytes += blob.size
            progress(index + 1, unreferenced.count, blob)
        }
        let temporary = try await io.run { Result { try storage.abandonedTemporaryFiles() } }.get()
        if !dryRun { for path in temporary { unlink(path) } }
        report.abandonedUploads = temporary.count
        return report
    }
}
