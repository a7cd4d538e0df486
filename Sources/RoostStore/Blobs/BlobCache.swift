import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A local folder of whole blobs read from a remote store (PostgreSQL's chunk rows, or an S3
/// bucket), so that downloads are sent from a file (`sendfile`, ranges) and a blob read again
/// costs no round trip. Blobs are named by their
/// digest, so a cached file is never stale. Files are `<sha256>-<size>`: after a crash, a file
/// whose length is not its name's is dropped (renames are not flushed: a lost file costs only a
/// fetch). Past the capacity, the least recently used files go; a file being sent stays readable
/// through its open descriptor.
///
/// Misses of one digest at the same time fetch it once: the first fetches, the others wait for it.
public final class BlobCache: Sendable {
    /// How a fetch that others waited for ended.
    private enum Outcome: Sendable {
        case cached
        case notStored
        case failed(any Error)
    }

    /// A fetch in flight, which later misses of the same digest wait for.
    private final class Fetch: Sendable {
        /// Left once `outcome` is set; waiting on it afterwards returns at once.
        let done = DispatchGroup()
        let outcome = Mutex<Outcome?>(nil)
        init() { done.enter() }
    }

    private struct State: Sendable {
        var index: BlobCacheIndex
        var fetching: [String: Fetch] = [:]
    }

    /// The cache's folder.
    public let folder: String
    private let state: Mutex<State>
    /// Fetches that went to the remote store, and reads the cache answered (for metrics).
    private let fetches = Atomic<Int>(0)
    private let hits = Atomic<Int>(0)

    /// Uses (and creates, mode 0700) `folder`, indexing the files already there, oldest use
    /// first, and deleting those cut short or over `capacity`.
    public init(folder: String, capacity: Int) throws {
        self.folder = folder
        if mkdir(folder, 0o700) != 0 && errno != EEXIST { throw Self.failure("create the blob cache folder") }
        var index = BlobCacheIndex(capacity: capacity)
        for file in Self.scan(folder) {
            for evicted in index.insert(file.sha256, size: file.size) {
                unlink(Self.path(folder, evicted.sha256, evicted.size))
            }
        }
        state = Mutex(State(index: index))
    }

    /// How many times a miss went to the remote store.
    public var fetchCount: Int { fetches.load(ordering: .relaxed) }
    /// How many reads the cache answered.
    public var hitCount: Int { hits.load(ordering: .relaxed) }
    /// Bytes cached now.
    public var cachedBytes: Int { state.withLock { $0.index.totalBytes } }
    /// Whether the blob is cached now.
    public func contains(_ sha256: String) -> Bool { state.withLock { $0.index.contains(sha256) } }

    /// The cached blob opened for reading, with its size; nil on a miss.
    public func open(_ sha256: String) -> (descriptor: Int32, size: Int)? {
        guard let size = state.withLock({ $0.index.use(sha256) }) else { return nil }
        let descriptor = Glibc.open(Self.path(folder, sha256, size), O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            // Evicted between the look-up and the open, or deleted by hand: a miss.
            state.withLock { _ = $0.index.remove(sha256) }
            return nil
        }
        // The file's time is its last use, so the order survives a restart.
        futimens(descriptor, nil)
        hits.add(1, ordering: .relaxed)
        return (descriptor, size)
    }

    /// The blob from the cache, or fetched by `load` on a miss: `load` writes the blob's bytes to
    /// the descriptor it is given (a new temporary file from `makeTemporaryFile`) and returns
    /// false when the blob is not stored. Other misses of the digest meanwhile wait for it.
    public func open(
        _ sha256: String, makeTemporaryFile: () throws -> (path: String, descriptor: Int32),
        load: (Int32) throws -> Bool
    ) throws -> (descriptor: Int32, size: Int)? {
        var waited = false
        while true {
            if let hit = open(sha256) { return hit }
            let (fetch, leads) = state.withLock { state -> (Fetch, Bool) in
                if let running = state.fetching[sha256] { return (running, false) }
                let fetch = Fetch()
                state.fetching[sha256] = fetch
                return (fetch, true)
            }
            if !leads && !waited {
                fetch.done.wait()
                waited = true
                switch fetch.outcome.withLock({ $0 }) {
                case .failed(let error): throw error
                case .notStored: return nil
                case .cached, nil: continue  // read it; fetched again only when it did not fit
                }
            }
            if !leads {
                // Waited once and still a miss (too big to cache, or evicted at once): no more waiting.
                return try fetchUncached(makeTemporaryFile: makeTemporaryFile, load: load)
            }
            let outcome: Result<(descriptor: Int32, size: Int)?, any Error> = Result {
                try fetchAndCache(sha256, makeTemporaryFile: makeTemporaryFile, load: load)
            }
            let ended: Outcome
            switch outcome {
            case .success(let found): ended = found == nil ? .notStored : .cached
            case .failure(let error): ended = .failed(error)
            }
            fetch.outcome.withLock { $0 = ended }
            state.withLock { _ = $0.fetching.removeValue(forKey: sha256) }
            fetch.done.leave()
            return try outcome.get()
        }
    }

    /// Fetches into a temporary file, opens it for reading, then moves it into the cache.
    private func fetchAndCache(
        _ sha256: String, makeTemporaryFile: () throws -> (path: String, descriptor: Int32),
        load: (Int32) throws -> Bool
    ) throws -> (descriptor: Int32, size: Int)? {
        guard let (path, descriptor, size) = try fetchToFile(makeTemporaryFile: makeTemporaryFile, load: load)
        else { return nil }
        insert(file: path, sha256: sha256, size: size)
        return (descriptor, size)
    }

    private func fetchUncached(
        makeTemporaryFile: () throws -> (path: String, descriptor: Int32), load: (Int32) throws -> Bool
    ) throws -> (descriptor: Int32, size: Int)? {
        guard let (path, descriptor, size) = try fetchToFile(makeTemporaryFile: makeTemporaryFile, load: load)
        else { return nil }
        unlink(path)
        return (descriptor, size)
    }

    /// The fetched blob as a file: its path, a descriptor open for reading and its size.
    private func fetchToFile(
        makeTemporaryFile: () throws -> (path: String, descriptor: Int32), load: (Int32) throws -> Bool
    ) throws -> (path: String, descriptor: Int32, size: Int)? {
        fetches.add(1, ordering: .relaxed)
        let (path, writing) = try makeTemporaryFile()
        let found: Bool
        do {
            found = try load(writing)
            close(writing)
        } catch {
            close(writing)
            unlink(path)
            throw error
        }
        guard found else {
            unlink(path)
            return nil
        }
        let reading = Glibc.open(path, O_RDONLY | O_CLOEXEC)
        var status = stat()
        guard reading >= 0, fstat(reading, &status) == 0 else {
            let error = Self.failure("open a fetched blob")
            if reading >= 0 { close(reading) }
            unlink(path)
            throw error
        }
        return (path, reading, Int(status.st_size))
    }

    /// Moves a complete file of the blob into the cache (or deletes it when the blob is cached
    /// already or too big to cache), then deletes the least recently used files past the capacity.
    public func insert(file path: String, sha256: String, size: Int) {
        let admitted = state.withLock { state -> Bool in
            !state.index.contains(sha256) && state.index.admits(size: size)
        }
        guard admitted, rename(path, Self.path(folder, sha256, size)) == 0 else {
            unlink(path)
            return
        }
        let evicted = state.withLock { $0.index.insert(sha256, size: size) }
        for blob in evicted { unlink(Self.path(folder, blob.sha256, blob.size)) }
    }

    /// Lines for `/metrics`: the cache's size, bound, hits and fetches.
    public func metrics(capacity: Int) -> String {
        """
        # HELP roost_blob_cache_bytes Bytes of whole blobs in this instance's local cache.
        # TYPE roost_blob_cache_bytes gauge
        roost_blob_cache_bytes \(cachedBytes)
        # HELP roost_blob_cache_capacity_bytes The cache's bound (--blob-cache-size).
        # TYPE roost_blob_cache_capacity_bytes gauge
        roost_blob_cache_capacity_bytes \(capacity)
        # HELP roost_blob_cache_hits_total Blob reads answered from the local cache.
        # TYPE roost_blob_cache_hits_total counter
        roost_blob_cache_hits_total \(hitCount)
        # HELP roost_blob_cache_fetches_total Blobs copied from the remote store into the cache.
        # TYPE roost_blob_cache_fetches_total counter
        roost_blob_cache_fetches_total \(fetchCount)

        """
    }

    /// Deletes the blob's file if cached.
    public func remove(_ sha256: String) {
        guard let size = state.withLock({ $0.index.remove(sha256) }) else { return }
        unlink(Self.path(folder, sha256, size))
    }

    static func path(_ folder: String, _ sha256: String, _ size: Int) -> String {
        "\(folder)/\(sha256)-\(size)"
    }

    /// The complete cached files in `folder`, least recently used first; deletes anything else.
    private static func scan(_ folder: String) -> [(sha256: String, size: Int)] {
        var files: [(sha256: String, size: Int, used: Double)] = []
        for name in (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [] {
            let parts = name.split(separator: "-")
            var status = stat()
            guard parts.count == 2, FileBlobStorage.isDigest(String(parts[0])), let size = Int(parts[1]),
                stat("\(folder)/\(name)", &status) == 0, Int(status.st_size) == size
            else {
                unlink("\(folder)/\(name)")
                continue
            }
            let used = Double(status.st_mtim.tv_sec) + Double(status.st_mtim.tv_nsec) / 1e9
            files.append((String(parts[0]), size, used))
        }
        return files.sorted { $0.used < $1.used }.map { ($0.sha256, $0.size) }
    }

    /// The error for a failed file operation; a full disk is an ``OutOfSpaceError``.
    public static func failure(_ what: String) -> any Error {
        let code = errno
        let detail = "could not \(what): \(String(cString: strerror(code)))"
        return OutOfSpaceError.isOutOfSpace(errno: code) ? OutOfSpaceError(detail) : StoreError.io(detail)
    }
}
