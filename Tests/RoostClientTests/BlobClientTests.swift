import Foundation
import RoostClient
import RoostTestSupport
import Testing

/// Blob members through the SDK: upload, cached download, and uploads queued while offline.
@Suite struct BlobClientTests {
    let memberRoute = "/ff/resources/:collection/:guid/:member"
    let png = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + Array(repeating: 1, count: 5000))

    @Test func uploadThenDownloadFromTheCache() async throws {
        let server = try await makeServer()
        let client = try makeClient(port: server.port)
        let celebrity = try await client.create(Celebrity(name: "Ada", gender: "female"))
        let uploaded = try #require(
            try await client.upload(png, contentType: "image/png", to: "imageData", of: celebrity).stored)
        #expect(uploaded.metadata.version == 2)
        #expect(uploaded.name == "Ada")

        #expect(try await client.download(member: "imageData", of: uploaded) == png)
        #expect(try await client.download(member: "imageData", of: uploaded) == png)
        #expect(try await server.answered(route: memberRoute, status: 200) == 2, "the PUT and one GET")
        #expect(try await server.answered(route: memberRoute, status: 304) == 1)

        let file = URL(fileURLWithPath: TestServer.makeTemporaryDirectory() + "/photo.png")
        #expect(try await client.download(member: "imageData", of: uploaded, to: file) == file)
        #expect(try Data(contentsOf: file) == png)
        do {
            _ = try await client.download(member: "missing", of: uploaded)
            Issue.record("a missing member downloaded")
        } catch let error as RoostError {
            #expect(error.status == 404)
        }
    }

    /// 100 KiB: over the queue's inline limit, so the bytes wait in a file beside the queue.
    let photo = Data((0..<100 * 1024).map { UInt8(truncatingIfNeeded: $0 &* 7) })

    @Test func anUploadMadeOfflineIsDeliveredOnce() async throws {
        let server = try await makeServer()
        let port = server.port
        let client = try makeClient(port: port)
        let celebrity = try await client.create(Celebrity(name: "Grace", gender: "female"))
        await server.stop()
        let outcome = try await client.upload(
            photo, contentType: "image/png", to: "imageData", of: celebrity, policy: .queueWhenOffline)
        guard case .queued(let operation) = outcome else {
            Issue.record("delivered while down")
            return
        }
        #expect(operation.kind == .upload)
        #expect(operation.member == "imageData")
        #expect(operation.body == nil && operation.bodyFile != nil)
        let restarted = try await makeServer(port: port, dataDirectory: server.dataDirectory)
        #expect(await client.flush() == FlushResult(delivered: 1, failed: 0, state: .idle))
        let raw = try await restarted.client.send(
            "GET", "/ff/resources/Celebrity/\(celebrity.guid)/imageData")
        #expect(raw.body.count == photo.count)
        let sameBytes = raw.body == Array(photo)  // a Bool, so a failure does not print 100 KiB
        #expect(sameBytes)
        #expect(raw.header("Content-Type") == "image/png")
        #expect(
            try await restarted.client.send("GET", "/ff/resources/Celebrity/\(celebrity.guid)").json[
                "version"] as? Int == 2)
    }
}
