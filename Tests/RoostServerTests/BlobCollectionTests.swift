import Foundation
import RoostCore
import RoostSQLite
import RoostStore
import RoostTestSupport
import Testing

/// Collection against uploads that reuse stored bytes: the collector's snapshot is taken, then
/// the upload runs, then the collector removes; the blob must survive, whatever the interleaving.
@Suite("Blob collection and reuse") struct BlobCollectionTests {
    static let workers = BackgroundWorkers(threads: 1, name: "roost-gc-test", lowPriority: false)
    let blobs = BlobTests()
    let bytes = Array(repeating: UInt8(9), count: 2048)

    /// A collector over the server's stores, as `roost blobs gc` makes one.
    func collector(_ server: TestServer) async throws -> (
        BlobCollector, any ObjectStore & FieldIndexStore & BlobReferenceStore
    ) {
        let objects = try await TestBackend.openStorage(for: server.dataDirectory).objectStore
        let collector = BlobCollector(
            storage: try await TestBackend.openBlobStorage(for: server.dataDirectory), references: objects,
            io: Self.workers)
        return (collector, objects)
    }

    /// How many blobs the server's blob store holds (files, or the database's rows).
    func storedBlobs(_ server: TestServer) async throws -> Int {
        let storage = try await TestBackend.openBlobStorage(for: server.dataDirectory)
        defer { storage.close() }
        return try await offCooperativePool { try storage.stored().count }
    }

    /// Stores `bytes` as a blob nothing refers to any more.
    func unreferencedBlob(_ server: TestServer) async throws {
        let first = try await blobs.newObject(server)
        let put = try await server.client.send("PUT", "/ff/resources/Celebrity/\(first)/photo", body: bytes)
        #expect(put.status == 200)
        #expect(try await server.client.send("DELETE", "/ff/resources/Celebrity/\(first)").status == 204)
    }

    @Test func anUploadThatReusesABlobAfterTheSnapshotKeepsIt() async throws {
        let server = try await blobs.server()
        try await unreferencedBlob(server)
        let (collector, _) = try await collector(server)
        let plan = try await collector.plan(minimumAge: 0)
        #expect(plan.unreferenced.map(\.sha256) == [BlobTests.sha256(bytes)])

        let second = try await blobs.newObject(server)
        let photo = "/ff/resources/Celebrity/\(second)/photo"
        #expect(try await server.client.send("PUT", photo, body: bytes).status == 200)
        #expect(try await storedBlobs(server) == 1, "the upload reused the stored blob")

        let report = try await collector.collect(plan)
        #expect(report.removedBlobs == 0)
        #expect(report.keptBlobs == 1)
        let download = try await server.client.send("GET", photo)
        #expect(download.status == 200)
        #expect(download.body.elementsEqual(bytes), "the bytes come back")
        await server.stop()
    }

    /// Between an upload's claim and its write, nothing refers to the blob yet: the claim alone
    /// must keep it. Claims older than the minimum age protect nothing and are forgotten.
    @Test func aClaimKeepsABlobUntilItsWriteCommits() async throws {
        let server = try await blobs.server()
        try await unreferencedBlob(server)
        let (collector, objects) = try await collector(server)
        let sha256 = BlobTests.sha256(bytes)
        let plan = try await collector.plan(minimumAge: 0)
        try await objects.claimBlob(sha256, at: Int64(Date().timeIntervalSince1970 * 1000) + 1000)
        #expect(try await collector.collect(plan).removedBlobs == 0)
        #expect(try await storedBlobs(server) == 1)

        let later = try await collector.plan(minimumAge: -3600)
        #expect(try await collector.collect(later).removedBlobs == 1, "an old claim protects nothing")
        #expect(try await storedBlobs(server) == 0)
        if let sqlite = objects as? SQLiteObjectStore {
            let claims = try sqlite.database.read {
                try $0.first("SELECT count(*) FROM blob_claims") { $0.integer(0) }
            }
            #expect(claims == 0)
        }
        await server.stop()
    }

    /// The other order: collection removes the blob after the upload found it stored but before
    /// the upload claimed it. The upload then moves its own file in.
    @Test func anUploadWhoseBlobWasCollectedMeanwhileStoresItsOwnFile() async throws {
        let server = try await blobs.server()
        try await unreferencedBlob(server)
        let (collector, _) = try await collector(server)
        #expect(try await collector.collect(minimumAge: 0).removedBlobs == 1)
        let second = try await blobs.newObject(server)
        let photo = "/ff/resources/Celebrity/\(second)/photo"
        #expect(try await server.client.send("PUT", photo, body: bytes).status == 200)
        #expect(try await server.client.send("GET", photo).body == bytes)
        await server.stop()
    }
}
