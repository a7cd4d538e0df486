/// Which blobs a local cache folder holds, their sizes and their order of use: the least recently
/// used first out once the total passes the capacity. A value type with no I/O, so its rules are
/// tested on their own; ``BlobCache`` does the files.
struct BlobCacheIndex: Sendable {
    private struct Entry: Sendable {
        var size: Int
        var older: String?
        var newer: String?
    }

    /// Bytes the cached blobs may add up to.
    let capacity: Int
    private(set) var totalBytes = 0
    private var entries: [String: Entry] = [:]
    private var oldest: String?
    private var newest: String?

    init(capacity: Int) {
        self.capacity = max(0, capacity)
    }

    var count: Int { entries.count }

    /// The blob's size if cached, marking it the most recently used.
    mutating func use(_ sha256: String) -> Int? {
        guard let entry = entries[sha256] else { return nil }
        detach(sha256)
        attachNewest(sha256, size: entry.size)
        return entry.size
    }

    /// Whether the blob is cached, without marking it used.
    func contains(_ sha256: String) -> Bool { entries[sha256] != nil }

    /// Whether a blob of `size` bytes may be cached at all: not when it alone passes the capacity
    /// (it would push everything else out and then itself).
    func admits(size: Int) -> Bool { size <= capacity }

    /// Adds a blob as the most recently used (or marks it so, when present); returns the blobs
    /// to delete, least recently used first, so that the total fits the capacity again.
    mutating func insert(_ sha256: String, size: Int) -> [(sha256: String, size: Int)] {
        if entries[sha256] != nil {
            _ = use(sha256)
            return []
        }
        attachNewest(sha256, size: size)
        totalBytes += size
        var evicted: [(sha256: String, size: Int)] = []
        while totalBytes > capacity, let victim = oldest, victim != sha256 {
            evicted.append((victim, remove(victim) ?? 0))
        }
        return evicted
    }

    /// Forgets a blob; its size, or nil when it was not cached.
    @discardableResult
    mutating func remove(_ sha256: String) -> Int? {
        guard let entry = entries[sha256] else { return nil }
        detach(sha256)
        totalBytes -= entry.size
        return entry.size
    }

    /// The cached blobs, least recently used first.
    var leastRecentlyUsedFirst: [String] {
        var order: [String] = []
        var cursor = oldest
        while let key = cursor {
            order.append(key)
            cursor = entries[key]?.newer
        }
        return order
    }

    private mutating func attachNewest(_ sha256: String, size: Int) {
        entries[sha256] = Entry(size: size, older: newest, newer: nil)
        if let previous = newest { entries[previous]?.newer = sha256 }
        newest = sha256
        if oldest == nil { oldest = sha256 }
    }

    /// Takes the entry out of the order and the table.
    private mutating func detach(_ sha256: String) {
        guard let entry = entries.removeValue(forKey: sha256) else { return }
        if let older = entry.older { entries[older]?.newer = entry.newer } else { oldest = entry.newer }
        if let newer = entry.newer { entries[newer]?.older = entry.older } else { newest = entry.older }
    }
}
