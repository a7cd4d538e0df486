import Foundation

/// How a read uses the disk cache.
public enum CachePolicy: Sendable {
    /// Always ask the server; nothing is stored.
    case networkOnly
    /// Answer from the cache when it has the resource, without asking the server.
    case cacheElseNetwork
    /// Ask the server (revalidating a cached copy with `If-None-Match`, so an unchanged resource
    /// costs a 304 and no body); answer from the cache when the server cannot be reached.
    case networkElseCache
}

/// Answers of GET requests on disk, with their ETags, bounded in size with least-recently-used
/// eviction.
///
/// One file per resource, named by a digest of its path; the file starts with a JSON header
/// line holding the path (checked on read, so a digest collision is a miss) and the ETag.
final class ResponseCache: Sendable {
    struct Entry: Sendable, Equatable {
        var etag: String?
        var body: Data
    }

    private struct Header: Codable {
        var path: String
        var etag: String?
    }

    private struct Index {
        var sizes: [String: Int] = [:]
        /// File names from least to most recently used.
        var order: [String] = []
        var totalBytes = 0

        mutating func touch(_ name: String) {
            if let position = order.lastIndex(of: name) { order.remove(at: position) }
            order.append(name)
        }
    }

    let folder: String
    let limit: Int
    private let index = Locked(Index())

    init(folder: String, limit: Int) throws {
        self.folder = folder
        self.limit = limit
        try FileSystem.makeFolder(folder)
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        var found: [(name: String, size: Int, used: Date)] = []
        for name in names where name.hasSuffix(".entry") {
            let attributes = try? FileManager.default.attributesOfItem(atPath: folder + "/" + name)
            found.append(
                (
                    name, (attributes?[.size] as? Int) ?? 0,
                    (attributes?[.modificationDate] as? Date) ?? .distantPast
                ))
        }
        index.withLock { index in
            for entry in found.sorted(by: { $0.used < $1.used }) {
                index.sizes[entry.name] = entry.size
                index.order.append(entry.name)
                index.totalBytes += entry.size
            }
        }
    }

    /// The cached answer for `path`, marking it recently used.
    func entry(for path: String) -> Entry? {
        let name = Self.fileName(for: path)
        guard let data = FileManager.default.contents(atPath: folder + "/" + name),
            let newline = data.firstIndex(of: UInt8(ascii: "\n")),
            let header = try? JSONDecoder().decode(Header.self, from: data[..<newline]),
            header.path == path
        else { return nil }
        index.withLock { $0.touch(name) }
        try? FileManager.default.setAttributes([.modificationDate: Date()], ofItemAtPath: folder + "/" + name)
        return Entry(etag: header.etag, body: Data(data[data.index(after: newline)...]))
    }

    /// Stores an answer, evicting the least recently used ones beyond the size limit.
    func store(_ entry: Entry, for path: String) {
        guard let header = try? JSONEncoder().encode(Header(path: path, etag: entry.etag)) else { return }
        var data = header
        data.append(UInt8(ascii: "\n"))
        data.append(entry.body)
        guard data.count <= limit else { return }
        let name = Self.fileName(for: path)
        // A cache write that fails (disk full) only costs a future request.
        guard (try? data.write(to: URL(fileURLWithPath: folder + "/" + name), options: .atomic)) != nil else {
            return
        }
        let evicted: [String] = index.withLock { index in
            index.totalBytes += data.count - (index.sizes[name] ?? 0)
            index.sizes[name] = data.count
            index.touch(name)
            var evicted: [String] = []
            while index.totalBytes > limit, let oldest = index.order.first, oldest != name {
                index.order.removeFirst()
                index.totalBytes -= index.sizes.removeValue(forKey: oldest) ?? 0
                evicted.append(oldest)
            }
            return evicted
        }
        for name in evicted { try? FileManager.default.removeItem(atPath: folder + "/" + name) }
    }

    /// Every cached answer whose path starts with `prefix`, for answering a query offline from
    /// what was read before. Reads each entry's file once; bounded by the cache's size limit.
    func entries(under prefix: String) -> [(path: String, entry: Entry)] {
        let names = index.withLock { $0.order }
        return names.compactMap { name in
            guard let data = FileManager.default.contents(atPath: folder + "/" + name),
                let newline = data.firstIndex(of: UInt8(ascii: "\n")),
                let header = try? JSONDecoder().decode(Header.self, from: data[..<newline]),
                header.path.hasPrefix(prefix)
            else { return nil }
            return (header.path, Entry(etag: header.etag, body: Data(data[data.index(after: newline)...])))
        }
    }

    /// Forgets one resource (after a write to it).
    func remove(_ path: String) {
        let name = Self.fileName(for: path)
        index.withLock { index in
            index.totalBytes -= index.sizes.removeValue(forKey: name) ?? 0
            index.order.removeAll { $0 == name }
        }
        try? FileManager.default.removeItem(atPath: folder + "/" + name)
    }

    /// Forgets everything (at logout: cached answers were the user's).
    func removeAll() {
        let names: [String] = index.withLock { index in
            defer { index = Index() }
            return Array(index.sizes.keys)
        }
        for name in names { try? FileManager.default.removeItem(atPath: folder + "/" + name) }
    }

    /// Bytes stored, for tests and diagnostics.
    var totalBytes: Int { index.withLock { $0.totalBytes } }

    /// FNV-1a, 64 bits, twice with different offsets: stable across launches, unlike `Hasher`.
    static func fileName(for path: String) -> String {
        func fnv(_ seed: UInt64) -> UInt64 {
            var hash = seed
            for byte in path.utf8 {
                hash ^= UInt64(byte)
                hash = hash &* 0x100_0000_01b3
            }
            return hash
        }
        let first = String(fnv(0xcbf2_9ce4_8422_2325), radix: 16)
        let second = String(fnv(0x8422_2325_cbf2_9ce4), radix: 16)
        return first + "-" + second + ".entry"
    }
}
