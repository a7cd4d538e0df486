import Foundation
import RoostCore
import RoostDrivers
import RoostPostgres
import RoostServer
import RoostTestSupport
import Testing

@Suite("Blobs in PostgreSQL through two server instances")
struct PostgresBlobServerTests {
    static let openRules = try! AppDefinition.parse(
        Array(
            #"{"collections":{"*":{"rules":{"create":"public","update":"public","delete":"public"}}}}"#.utf8))

    /// A server on `database` with a data folder of its own.
    func instance(_ database: PostgresTestDatabase, blobStore: BlobStoreKind? = nil) async throws
        -> TestServer
    {
        try await TestServer { configuration in
            configuration.databaseURL = database.configuration.connectionString
            configuration.databaseConnections = 2
            configuration.blobStore = blobStore
            configuration.appDefinition = Self.openRules
            configuration.passwordHasher = PasswordHasher.cheapForTests()
        }
    }

    @Test func aBlobUploadedThroughOneInstanceDownloadsWithARangeThroughAnotherOnItsOwnDisk() async throws {
        try await PostgresTestDatabase.with { database in
            let first = try await instance(database)
            let second = try await instance(database)
            #expect(first.dataDirectory != second.dataDirectory)
            let created = try await first.client.send("POST", "/ff/resources/Photo", json: #"{"name":"Ada"}"#)
            let guid = try #require(created.json["guid"] as? String, "\(created.text)")
            let bytes = blobBytes(PostgresBlobStorage.chunkSize * 3 + 123, seed: 77)
            let path = "/ff/resources/Photo/\(guid)/image"
            let put = try await first.client.send(
                "PUT", path, headers: [("Content-Type", "application/x-test")], body: bytes)
            #expect(put.status == 200, "\(put.text)")

            // The second instance never saw the upload: its folder holds no blob until it reads one.
            #expect(fileNames(in: second.dataDirectory + "/blobs/cache").isEmpty)
            let start = PostgresBlobStorage.chunkSize - 10
            let end = PostgresBlobStorage.chunkSize * 2 + 10
            let part = try await second.client.send(
                "GET", path, headers: [("Range", "bytes=\(start)-\(end)")])
            #expect(part.status == 206)
            #expect(part.header("Content-Range") == "bytes \(start)-\(end)/\(bytes.count)")
            #expect(part.body == Array(bytes[start...end]))
            let whole = try await second.client.send("GET", path)
            #expect(whole.status == 200)
            let same = whole.body == bytes
            #expect(same)
            #expect(whole.header("ETag") == "\"\(sha256Hex(bytes))\"")
            #expect(
                fileNames(in: second.dataDirectory + "/blobs/cache") == ["\(sha256Hex(bytes))-\(bytes.count)"]
            )
            let metrics = try await second.client.send("GET", "/metrics")
            #expect(metrics.text.contains("roost_blob_cache_bytes \(bytes.count)\n"))
            #expect(metrics.text.contains("roost_blob_cache_capacity_bytes \(1 << 30)\n"))
            #expect(metrics.text.contains("roost_blob_cache_hits_total 1\n"))
            #expect(metrics.text.contains("roost_blob_cache_fetches_total 1\n"))
            await first.stop()
            await second.stop()
        }
    }

    @Test func blobsGCWithTheDatabaseRemovesUnreferencedChunkRowsOnceOldEnough() async throws {
        try await PostgresTestDatabase.with { database in
            let server = try await instance(database)
            let created = try await server.client.send(
                "POST", "/ff/resources/Photo", json: #"{"name":"Ada"}"#)
            let guid = try #require(created.json["guid"] as? String)
            let bytes = blobBytes(4096, seed: 8)
            #expect(
                try await server.client.send("PUT", "/ff/resources/Photo/\(guid)/image", body: bytes).status
                    == 200)
            #expect(try await server.client.send("DELETE", "/ff/resources/Photo/\(guid)").status == 204)
            let url = database.configuration.connectionString

            let hasty = try await runRoost(["blobs", "gc", "--database", url, "--min-age", "0"])
            #expect(hasty.status == 64)
            #expect(
                hasty.errorOutput.contains(
                    "With --database, instances may be uploading: --min-age must be at least 600"))
            let young = try await runRoost(["blobs", "gc", "--database", url])
            #expect(young.status == 0, "\(young.errorOutput)")
            #expect(young.output == "freed 0 blobs (0 bytes) and 0 abandoned uploads; 1 blob kept\n")

            // Two hours older: past the default hour.
            let admin = try PostgresDatabase(configuration: database.configuration, migrations: [])
            try await admin.write { try $0.run("UPDATE blob_files SET created_at = created_at - 7200000") }
            await admin.close()
            let dry = try await runRoost(["blobs", "gc", "--database", url, "--dry-run"])
            #expect(
                dry.output.hasSuffix("would free 1 blob (4096 bytes) and 0 abandoned uploads; 0 blobs kept\n")
            )
            let freed = try await runRoost(["blobs", "gc", "--database", url])
            #expect(freed.status == 0, "\(freed.errorOutput)")
            #expect(freed.output == "freed 1 blob (4096 bytes) and 0 abandoned uploads; 0 blobs kept\n")
            let counts = try await blobRowCounts(database, sha256Hex(bytes))
            #expect(counts.files == 0 && counts.chunks == 0)
            await server.stop()
        }
    }

    @Test func theDirectoryStoreStaysAvailableWithADatabase() async throws {
        try await PostgresTestDatabase.with { database in
            let server = try await instance(database, blobStore: .directory)
            let created = try await server.client.send(
                "POST", "/ff/resources/Photo", json: #"{"name":"Ada"}"#)
            let guid = try #require(created.json["guid"] as? String)
            let bytes = blobBytes(1000, seed: 5)
            let put = try await server.client.send("PUT", "/ff/resources/Photo/\(guid)/image", body: bytes)
            #expect(put.status == 200, "\(put.text)")
            let sha256 = sha256Hex(bytes)
            #expect(
                FileManager.default.fileExists(
                    atPath:
                        "\(server.dataDirectory)/blobs/\(sha256.prefix(2))/\(sha256.dropFirst(2).prefix(2))/\(sha256)"
                ))
            #expect(try await blobRowCounts(database, sha256).files == 0)
            await server.stop()
        }
    }

    @Test func theDefaultStoreFollowsTheDatabase() throws {
        var configuration = ServerConfiguration()
        #expect(configuration.effectiveBlobStore == .directory)
        configuration.databaseURL = "postgres://localhost/roost"
        #expect(configuration.effectiveBlobStore == .database)
        configuration.blobStore = .directory
        #expect(configuration.effectiveBlobStore == .directory)
    }

    @Test func theDatabaseStoreWithoutADatabaseIsRefusedClearly() async throws {
        var configuration = ServerConfiguration()
        configuration.dataDirectory = TestServer.makeTemporaryDirectory()
        configuration.blobStore = .database
        #expect(throws: BlobStoreConfigurationError.self) { try Application(configuration: configuration) }
        let result = try await runRoost(["serve", "--blob-store", "database", "--port", "0"])
        #expect(result.status == 64)
        #expect(
            result.errorOutput.contains(
                "--blob-store database keeps blobs in the PostgreSQL database, so it needs --database"))
        let bad = try await runRoost(["serve", "--blob-store", "s3"])
        #expect(bad.status == 64)
        #expect(bad.errorOutput.contains("--blob-store takes 'database' or 'directory', not 's3'"))
    }
}
