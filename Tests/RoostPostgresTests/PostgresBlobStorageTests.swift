import Foundation
import RoostTestSupport
import Synchronization
import Testing

@testable import RoostPostgres
@testable import RoostStore

@Suite("PostgreSQL blob store: chunked rows, a local read-through cache", .serialized)
struct PostgresBlobStorageTests {
    static let chunk = PostgresBlobStorage.chunkSize

    @Test(arguments: [0, 1, chunk - 1, chunk, chunk + 1, 5 << 20])
    func bytesComeBackExactlyThroughTheInstanceThatStoredThemAndAnotherThatNeverSawThem(size: Int)
        async throws
    {
        try await withBlobDatabase { test, makeStorage in
            let writer = try makeStorage(PostgresBlobStorage.defaultCacheBytes)
            let reader = try makeStorage(PostgresBlobStorage.defaultCacheBytes)
            let bytes = blobBytes(size, seed: UInt64(size) + 7)
            let sha256 = try await upload(bytes, to: writer)

            let counts = try await blobRowCounts(test, sha256)
            #expect(counts.files == 1)
            #expect(counts.chunks == (size + Self.chunk - 1) / Self.chunk)
            // The writer kept its upload as its cached copy: no fetch.
            #expect(try await download(sha256, from: writer) == bytes)
            #expect(writer.cache.fetchCount == 0)
            // The reader fetches once (the miss), then reads its cache.
            #expect(try await download(sha256, from: reader) == bytes)
            #expect(try await download(sha256, from: reader) == bytes)
            #expect(reader.cache.fetchCount == 1)
            #expect(fileNames(in: reader.cache.folder) == ["\(sha256)-\(size)"])
            // Nothing is left among the temporary files.
            #expect(fileNames(in: reader.cache.folder + "/../tmp").isEmpty)
            #expect(fileNames(in: writer.cache.folder + "/../tmp").isEmpty)
        }
    }

    @Test func aDigestNotStoredOpensAsNilAndIsNotCached() async throws {
        try await withBlobDatabase { _, makeStorage in
            let storage = try makeStorage(1 << 20)
            let missing = String(repeating: "ab", count: 32)
            #expect(try await download(missing, from: storage) == nil)
            #expect(try await onThread { try storage.modified(missing) } == nil)
            #expect(try await download("not-a-digest", from: storage) == nil)
            #expect(fileNames(in: storage.cache.folder).isEmpty)
        }
    }

    @Test func adoptingADigestStoredAlreadyByAnotherInstanceKeepsTheFirstRowsAndDropsTheFile() async throws {
        try await withBlobDatabase { test, makeStorage in
            let first = try makeStorage(1 << 20)
            let second = try makeStorage(1 << 20)
            let bytes = blobBytes(Self.chunk + 10)
            let sha256 = try await upload(bytes, to: first)
            let created = try #require(try await onThread { try first.modified(sha256) })

            try await upload(bytes, to: second)
            #expect(try await onThread { try second.modified(sha256) } == created)
            let counts = try await blobRowCounts(test, sha256)
            #expect(counts.files == 1 && counts.chunks == 2)
            #expect(fileNames(in: second.cache.folder + "/../tmp").isEmpty)
            #expect(try await onThread { try first.stored() }.map(\.sha256) == [sha256])
            #expect(try await onThread { try first.stored() }.first?.size == bytes.count)
        }
    }

    @Test func twoInstancesAdoptingOneDigestAtOnceStoreItOnce() async throws {
        try await withBlobDatabase { test, makeStorage in
            let storages = [try makeStorage(1 << 30), try makeStorage(1 << 30)]
            let bytes = blobBytes(3 << 20, seed: 13)
            let digests = try await withThrowingTaskGroup(of: String.self) { group in
                for storage in storages { group.addTask { try await upload(bytes, to: storage) } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(Set(digests) == [sha256Hex(bytes)])
            let counts = try await blobRowCounts(test, sha256Hex(bytes))
            #expect(counts.files == 1 && counts.chunks == 12)
            for storage in storages {
                #expect(fileNames(in: storage.cache.folder + "/../tmp").isEmpty)
            }
            #expect(try await download(sha256Hex(bytes), from: try makeStorage(1 << 30)) == bytes)
        }
    }

    @Test func theCacheEvictsTheLeastRecentlyUsedBlobsPastItsBound() async throws {
        try await withBlobDatabase { _, makeStorage in
            let writer = try makeStorage(PostgresBlobStorage.defaultCacheBytes)
            let size = 100 << 10
            let reader = try makeStorage(3 * size)
            var digests: [String] = []
            for seed in 0..<4 {
                digests.append(try await upload(blobBytes(size, seed: UInt64(seed)), to: writer))
            }

            for digest in digests[0..<3] { _ = try await download(digest, from: reader) }
            #expect(reader.cache.cachedBytes == 3 * size)
            // The first is used again, so the second is now the least recently used.
            #expect(try await download(digests[0], from: reader) == blobBytes(size, seed: 0))
            #expect(reader.cache.fetchCount == 3)
            #expect(try await download(digests[3], from: reader) == blobBytes(size, seed: 3))

            #expect(reader.cache.cachedBytes == 3 * size)
            #expect(
                fileNames(in: reader.cache.folder)
                    == [digests[0], digests[2], digests[3]].map { "\($0)-\(size)" }.sorted())
            // The evicted one is fetched again.
            #expect(try await download(digests[1], from: reader) == blobBytes(size, seed: 1))
            #expect(reader.cache.fetchCount == 5)

            // A blob bigger than the whole cache is served but not kept, and evicts nothing.
            let big = try await upload(blobBytes(4 * size, seed: 9), to: writer)
            #expect(try await download(big, from: reader) == blobBytes(4 * size, seed: 9))
            #expect(!reader.cache.contains(big))
            #expect(fileNames(in: reader.cache.folder).count == 3)
        }
    }

    @Test func aRestartKeepsTheCacheAndDropsFilesCutShort() async throws {
        try await withBlobDatabase { _, makeStorage in
            let writer = try makeStorage(1 << 20)
            let reader = try makeStorage(1 << 20)
            let bytes = blobBytes(1000, seed: 3)
            let sha256 = try await upload(bytes, to: writer)
            _ = try await download(sha256, from: reader)
            // A file whose length is not its name's (a crash before the data reached the disk).
            let torn = String(repeating: "cd", count: 32)
            FileManager.default.createFile(
                atPath: "\(reader.cache.folder)/\(torn)-500", contents: Data([1, 2]))

            let restarted = try BlobCache(folder: reader.cache.folder, capacity: 1 << 20)
            #expect(restarted.contains(sha256))
            #expect(!restarted.contains(torn))
            #expect(fileNames(in: reader.cache.folder) == ["\(sha256)-1000"])
        }
    }

    @Test func concurrentMissesOfOneDigestFetchItOnce() async throws {
        try await withBlobDatabase { _, makeStorage in
            let writer = try makeStorage(PostgresBlobStorage.defaultCacheBytes)
            let reader = try makeStorage(PostgresBlobStorage.defaultCacheBytes)
            // Four chunks: small, since the tests share one process with others that measure
            // its memory, yet several round trips long.
            let bytes = blobBytes(4 * Self.chunk, seed: 11)
            let sha256 = try await upload(bytes, to: writer)

            // Eight threads released together, as eight downloads arriving at once.
            let start = DispatchSemaphore(value: 0)
            let readers = 8
            let results = try await withThrowingTaskGroup(of: Bool.self) { group in
                for _ in 0..<readers {
                    group.addTask {
                        try await onThread {
                            start.wait()
                            guard let (descriptor, size) = try reader.open(sha256) else { return false }
                            var read = [UInt8](repeating: 0, count: size)
                            let count = read.withUnsafeMutableBytes {
                                pread(descriptor, $0.baseAddress!, size, 0)
                            }
                            close(descriptor)
                            return count == size && read == bytes
                        }
                    }
                }
                for _ in 0..<readers { start.signal() }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(results == Array(repeating: true, count: readers))
            #expect(reader.cache.fetchCount == 1)
        }
    }

    @Test func removeDeletesTheRowsAndThisInstancesCachedCopy() async throws {
        try await withBlobDatabase { test, makeStorage in
            let writer = try makeStorage(1 << 20)
            let reader = try makeStorage(1 << 20)
            let bytes = blobBytes(Self.chunk * 2 + 5, seed: 5)
            let kept = try await upload(blobBytes(10, seed: 6), to: writer)
            let sha256 = try await upload(bytes, to: writer)
            _ = try await download(sha256, from: reader)
            #expect(reader.cache.contains(sha256))

            try await onThread { try reader.remove(sha256) }
            let counts = try await blobRowCounts(test, sha256)
            #expect(counts.files == 0 && counts.chunks == 0)
            #expect(!reader.cache.contains(sha256))
            #expect(fileNames(in: reader.cache.folder).isEmpty)
            #expect(try await download(sha256, from: reader) == nil)
            #expect(try await onThread { try writer.modified(sha256) } == nil)
            #expect(try await onThread { try writer.stored() }.map(\.sha256) == [kept])
            // Removing again, or what never was, is no error.
            try await onThread { try reader.remove(sha256) }
            try await onThread { try writer.remove(sha256) }
            #expect(!writer.cache.contains(sha256))
        }
    }

    @Test func idleConnectionsCloseAfterTheIdleTimeout() async throws {
        try await PostgresTestDatabase.with { test in
            let migrating = try PostgresDatabase(
                configuration: test.configuration, migrations: PostgresBlobStorage.migrations)
            await migrating.close()
            var configuration = test.configuration
            configuration.idleConnectionTimeout = .milliseconds(200)
            let folder = TestServer.makeTemporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: folder) }
            let storage = try PostgresBlobStorage(dataDirectory: folder, configuration: configuration)
            defer { storage.close() }
            let sha256 = try await upload(blobBytes(10), to: storage)
            #expect(storage.connections.idleCount == 1)
            let closed = await eventually(within: 10) { storage.connections.idleCount == 0 }
            #expect(closed)
            // The next operation connects again.
            #expect(try await onThread { try storage.modified(sha256) } != nil)
        }
    }

    @Test func adoptingA100MiBBlobKeepsMemoryBounded() async throws {
        try await withBlobDatabase { test, makeStorage in
            let storage = try makeStorage(PostgresBlobStorage.defaultCacheBytes)
            let size = 100 << 20
            let (path, descriptor) = try storage.makeTemporaryFile()
            // Written a megabyte at a time, so the test itself holds little.
            let piece = blobBytes(1 << 20, seed: 21)
            for _ in 0..<(size >> 20) { try writeAll(descriptor, piece) }
            close(descriptor)
            let sha256 = String(repeating: "0f", count: 32)  // the store does not check digests

            let before = residentBytes()
            let peak = Mutex(before)
            let sampling = Atomic<Bool>(true)
            let sampler = Thread {
                while sampling.load(ordering: .relaxed) {
                    let now = residentBytes()
                    peak.withLock { $0 = max($0, now) }
                    usleep(2000)
                }
            }
            sampler.start()
            try await onThread { try storage.adopt(temporaryFile: path, sha256: sha256) }
            sampling.store(false, ordering: .relaxed)
            let growth = peak.withLock { $0 } - before
            print("adopting 100 MiB: resident memory grew by \(growth >> 10) KiB at most")
            #expect(growth < 16 << 20)
            let counts = try await blobRowCounts(test, sha256)
            #expect(counts.chunks == size / Self.chunk)
        }
    }

    @Test func aStoppedDatabaseMakesTheStoreUnavailableAndItRecoversByItself() async throws {
        // A cluster of this test's own, since stopping the shared one would fail the others.
        let folder = FileManager.default.temporaryDirectory
            .appendingPathComponent("roost-pg-blobs-down-\(UUID().uuidString.prefix(8))").path
        let url = try runClusterScript(["start", folder])
        defer { _ = try? runClusterScript(["stop", folder]) }
        let server = try PostgresConfiguration(connectionString: url)
        let migrating = try PostgresDatabase(
            configuration: server, migrations: PostgresBlobStorage.migrations)
        await migrating.close()
        let data = folder + "-data"
        try FileManager.default.createDirectory(atPath: data, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: data) }
        let storage = try PostgresBlobStorage(dataDirectory: data, configuration: server, cacheBytes: 1 << 20)
        defer { storage.close() }
        let cached = try await upload(blobBytes(100, seed: 1), to: storage)

        try runClusterScript(["halt", folder])
        let bytes = blobBytes(300, seed: 2)
        let kinds = [
            await storeErrorKind { try await upload(bytes, to: storage) },
            await storeErrorKind {
                _ = try await download(String(repeating: "1a", count: 32), from: storage)
            },
            await storeErrorKind { _ = try await onThread { try storage.modified(cached) } },
            await storeErrorKind { _ = try await onThread { try storage.stored() } },
            await storeErrorKind { try await onThread { try storage.remove(cached) } },
        ]
        #expect(kinds == Array(repeating: .unavailable, count: kinds.count))
        // A failed adopt leaves its temporary file to the upload, which removes it.
        #expect(fileNames(in: data + "/blobs/tmp").count == 1)
        // What this instance has cached is still served.
        #expect(try await download(cached, from: storage) == blobBytes(100, seed: 1))

        _ = try runClusterScript(["start", folder])
        let reconnected = await eventually(within: 30) {
            (try? await onThread { try storage.stored() }.count) == 1
        }
        #expect(reconnected)
        try await upload(bytes, to: storage)
        #expect(try await onThread { try storage.stored() }.count == 2)
    }
}

@Suite("The blob cache's order of use")
struct BlobCacheIndexTests {
    @Test func theLeastRecentlyUsedGoFirstAndAUseMovesABlobToTheEnd() {
        var index = BlobCacheIndex(capacity: 30)
        #expect(index.insert("a", size: 10).isEmpty)
        #expect(index.insert("b", size: 10).isEmpty)
        #expect(index.insert("c", size: 10).isEmpty)
        #expect(index.use("a") == 10)
        #expect(index.leastRecentlyUsedFirst == ["b", "c", "a"])
        let evicted = index.insert("d", size: 15)
        #expect(evicted.map(\.sha256) == ["b", "c"])
        #expect(index.totalBytes == 25)
        #expect(index.leastRecentlyUsedFirst == ["a", "d"])
        #expect(index.insert("a", size: 10).isEmpty)
        #expect(index.leastRecentlyUsedFirst == ["d", "a"])
        #expect(index.remove("d") == 15)
        #expect(index.remove("d") == nil)
        #expect(index.leastRecentlyUsedFirst == ["a"])
        #expect(index.use("zz") == nil)
        #expect(index.admits(size: 30) && !index.admits(size: 31))
    }
}
