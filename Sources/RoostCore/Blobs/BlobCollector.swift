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

    /// What a collection saw at one moment: blobs that nothing referred to then.
    public struct Plan: Sendable {
        /// Unreferenced blobs old enough to go, as the snapshot saw them.
        public let unreferenced: [StoredBlob]
        /// Blobs the snapshot kept.
        public let kept: Int
        /// Blobs changed and claims made after this are young: an upload may be about to use them.
        public let cutoff: Date
    }

    let storage: any BlobStorage
    let references: any BlobReferenceStore
    /// Walking the blob folders blocks; it runs here, not on Swift's cooperative threads.
    let io: BackgroundWorkers

    public init(storage: any BlobStorage, references: any BlobReferenceStore, io: BackgroundWorkers) {
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
        try await collect(plan(minimumAge: minimumAge), dryRun: dryRun, progress: progress)
    }

    /// The first half of a collection: which blobs nothing refers to now.
    public func plan(minimumAge: TimeInterval, now: Date = Date()) async throws -> Plan {
        let storage = self.storage
        let files = try await io.run { Result { try storage.stored() } }.get()
        let referenced = try await references.referencedBlobs()
        let cutoff = now.addingTimeInterval(-minimumAge)
        let unreferenced = files.filter { !referenced.contains($0.sha256) && $0.modified <= cutoff }
        return Plan(unreferenced: unreferenced, kept: files.count - unreferenced.count, cutoff: cutoff)
    }

    /// How many blobs one writer job checks and removes: it holds up writes while it runs.
    static let removalBatch = 64

    /// The second half: removes the planned blobs that are still unused. The snapshot may be stale
    /// by now (an upload may have reused a blob since), so each blob is checked again and removed
    /// under the writer, where no write that refers to it can commit in between.
    public func collect(
        _ plan: Plan, dryRun: Bool = false, progress: (Int, Int, StoredBlob) -> Void = { _, _, _ in }
    ) async throws -> Report {
        var report = Report(keptBlobs: plan.kept)
        var done = 0
        for start in stride(from: 0, to: plan.unreferenced.count, by: Self.removalBatch) {
            let batch = plan.unreferenced[start..<min(start + Self.removalBatch, plan.unreferenced.count)]
            let removed =
                dryRun
                ? Set(batch.map(\.sha256))
                : try await references.removeUnusedBlobs(
                    batch.map(\.sha256), unusedSince: plan.cutoff, from: storage)
            for blob in batch {
                done += 1
                guard removed.contains(blob.sha256) else {
                    report.keptBlobs += 1
                    continue
                }
                report.removedBlobs += 1
                report.removedBytes += blob.size
                progress(done, plan.unreferenced.count, blob)
            }
        }
        if !dryRun { try await references.forgetBlobClaims(madeBefore: plan.cutoff) }
        let storage = self.storage
        let temporary = try await io.run { Result { try storage.abandonedTemporaryFiles() } }.get()
        if !dryRun { for path in temporary { unlink(path) } }
        report.abandonedUploads = temporary.count
        return report
    }
}
