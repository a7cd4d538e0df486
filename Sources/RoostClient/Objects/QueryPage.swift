import Foundation

/// One page of a query's results.
public struct QueryPage<Model: RoostModel>: Sendable {
    /// The objects, with this device's queued writes applied.
    public var items: [Stored<Model>]
    /// How many objects match in all, when asked for (`total: true`); nil otherwise and offline.
    public var total: Int?
    /// Objects left out because they do not decode into `Model` (with
    /// ``Query/skippingUndecodable()``).
    public var skipped: [UndecodableObject]
    /// Where the page came from.
    public var origin: ReadOrigin

    /// Whether any item shows writes still waiting in the offline queue.
    public var hasPendingWrites: Bool { items.contains { $0.hasPendingWrites } }
}

/// How a query the server never answered before is answered while it cannot be reached.
public enum OfflineQueryPolicy: Sendable {
    /// Evaluate the query on the device over every object the disk cache holds (from earlier
    /// reads and lists) plus queued writes, marked ``ReadOrigin/device``. Raw query text and
    /// `random(guid)` cannot be evaluated on the device and still fail with `offline_no_cache`.
    case answerFromCachedObjects
    /// Fail with `offline_no_cache`.
    case failWithoutCache
}

/// A query's pages as an `AsyncSequence`, each fetched only when the loop asks for it.
public struct QueryPages<Model: RoostModel>: AsyncSequence, Sendable {
    /// One page of results.
    public typealias Element = [Stored<Model>]
    let query: Query<Model>
    let size: Int
    let cachePolicy: CachePolicy?

    /// Fetches the next page when asked.
    public struct AsyncIterator: AsyncIteratorProtocol {
        let pages: QueryPages
        var start = 0
        var finished = false

        /// The next page, fetched now; nil after the last (short) one.
        public mutating func next() async throws -> [Stored<Model>]? {
            guard !finished, pages.size > 0 else { return nil }
            let page = try await pages.query.page(
                start: start, count: pages.size, cachePolicy: pages.cachePolicy)
            start += pages.size
            if page.count < pages.size { finished = true }
            return page.isEmpty ? nil : page
        }
    }

    /// An iterator from the first page.
    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(pages: self) }
}

/// An object of a page that may not decode: its result, and its guid to report it by.
private struct PageItem<Model: RoostModel>: Decodable {
    let result: Result<Stored<Model>, any Error>
    let guid: String?
    let depth: Int

    private enum Keys: String, CodingKey { case guid }

    init(from decoder: any Decoder) throws {
        depth = decoder.codingPath.count
        guid = try? decoder.container(keyedBy: Keys.self).decode(String.self, forKey: .guid)
        do {
            result = .success(try Stored<Model>(from: decoder))
        } catch {
            result = .failure(error)
        }
    }
}

private struct PageBody<Model: RoostModel>: Decodable {
    let items: [PageItem<Model>]
    let total: Int?
}

extension Query {
    /// One page of results and what came with it: the total (with `total: true`), the objects
    /// left out by ``skippingUndecodable()``, and where the page came from.
    public func fetchPage(
        start: Int = 0, count: Int = 100, total: Bool = false, cachePolicy: CachePolicy? = nil
    )
        async throws -> QueryPage<Model>
    {
        let path = try path(start: start, count: count, total: total)
        let answer: (body: Data, origin: ReadOrigin)
        do {
            answer = try await client.read(path, cachePolicy: cachePolicy)
        } catch let error as RoostError where !error.isFromServer && cachePolicy != .networkOnly {
            return try await client.answerOffline(self, start: start, count: count, after: error)
        }
        let body = try Wire.decode(PageBody<Model>.self, from: answer.body)
        var page = QueryPage<Model>(items: [], total: body.total, skipped: [], origin: answer.origin)
        for item in body.items {
            switch item.result {
            case .success(let stored): page.items.append(stored)
            case .failure(let error):
                let object = UndecodableObject(
                    collection: Model.collection, guid: item.guid ?? "?",
                    field: RoostError.field(of: error, below: item.depth),
                    reason: RoostError.summary(of: error, below: item.depth))
                guard skipsUndecodable else { throw RoostError.undecodable(object) }
                page.skipped.append(object)
            }
        }
        page.items = Array(
            try await client.withPendingWrites(page.items, of: self, start: start).prefix(count))
        return page
    }
}

extension Roost {
    /// A page with the queued writes of its collection applied: updated objects changed (and
    /// dropped if they no longer match), deleted ones removed, and on the first page, queued
    /// creates and cached objects whose queued changes make them match added, in the query's order.
    func withPendingWrites<Model>(_ items: [Stored<Model>], of query: Query<Model>, start: Int) throws
        -> [Stored<Model>]
    {
        let pending = pendingWrites(in: Model.collection)
        guard !pending.isEmpty else { return items }
        let byObject = Dictionary(grouping: pending, by: \.guid)
        var documents: [(document: [String: JSON], pending: Bool, stored: Stored<Model>?)] = []
        for item in items {
            guard let operations = byObject[item.guid] else {
                documents.append((item.document ?? [:], false, item))
                continue
            }
            guard let shown = overlaid(item.document, operations),
                query.condition?.matches(shown) != false
            else { continue }
            documents.append((shown, true, nil))
        }
        if start == 0 {
            let listed = Set(items.map(\.guid))
            for guid in pending.map(\.guid)
            where !listed.contains(guid)
                && !documents.contains(where: { $0.document["guid"]?.stringValue == guid })
            {
                let cached = cache.entry(for: Self.objectPath(Model.collection, guid)).flatMap {
                    try? JSONDecoder().decode([String: JSON].self, from: $0.body)
                }
                guard let shown = overlaid(cached, byObject[guid] ?? []),
                    query.condition.map({ $0.matches(shown) == true }) ?? true
                else { continue }
                documents.append((shown, true, nil))
            }
        }
        let ordered =
            query.sortKeys.isEmpty
            ? documents
            : LocalSort.sorted(documents.map(\.document), by: query.sortKeys).map { sorted in
                documents.first { $0.document["guid"] == sorted["guid"] }!
            }
        return try ordered.map { entry in
            if let stored = entry.stored { return stored }
            var stored = try Self.decodeObject(entry.document, as: Model.self)
            stored.hasPendingWrites = entry.pending
            stored.origin = .device
            return stored
        }
    }

    /// A query the server could not be asked and the cache has no answer for.
    func answerOffline<Model>(_ query: Query<Model>, start: Int, count: Int, after error: RoostError)
        async throws
        -> QueryPage<Model>
    {
        let evaluable = query.condition.map { !$0.needsServer } ?? true
        guard configuration.offlineQueries == .answerFromCachedObjects, evaluable else {
            throw RoostError(
                status: nil, code: RoostError.Code.offlineNoCache,
                message:
                    "The server cannot be reached and this \(Model.collection) query was never answered on this device"
                    + (evaluable
                        ? "." : "; raw query text and random picks can only be answered by the server."),
                details: ["cause": .string(error.code.rawValue)])
        }
        var documents = Array(cachedDocuments(in: Model.collection).values)
        let pending = Dictionary(grouping: pendingWrites(in: Model.collection), by: \.guid)
        documents = documents.map { document in
            pending[document["guid"]?.stringValue ?? ""].flatMap { overlaid(document, $0) } ?? document
        }
        let known = Set(documents.compactMap { $0["guid"]?.stringValue })
        for (guid, operations) in pending where !known.contains(guid) {
            if let created = overlaid(nil, operations) { documents.append(created) }
        }
        // Deleted ones are gone from the overlay already; keep the matches, in the query's order.
        let deleted = Set(pending.filter { overlaid([:], $0.value) == nil }.keys)
        let matching = documents.filter { document in
            !deleted.contains(document["guid"]?.stringValue ?? "")
                && (query.condition.map { $0.matches(document) == true } ?? true)
        }
        // Unsorted, the server answers in the order objects were stored: creation order here.
        let ordered = LocalSort.sorted(
            matching, by: query.sortKeys.isEmpty ? ["createdAt asc"] : query.sortKeys)
        let window = ordered.dropFirst(start).prefix(count)
        var page = QueryPage<Model>(items: [], total: nil, skipped: [], origin: .device)
        for document in window {
            do {
                var stored = try Self.decodeObject(document, as: Model.self)
                stored.hasPendingWrites = pending[stored.guid] != nil
                stored.origin = .device
                page.items.append(stored)
            } catch let failure as RoostError where query.skipsUndecodable {
                page.skipped.append(
                    UndecodableObject(
                        collection: Model.collection, guid: document["guid"]?.stringValue ?? "?",
                        field: failure.details["field"]?.stringValue, reason: failure.message))
            }
        }
        return page
    }
}

extension QueryCondition {
    /// Whether only the server can evaluate it: raw text, or `random(guid)`.
    var needsServer: Bool {
        switch self {
        case .raw: return true
        case .comparison(_, _, let value): return value.json == nil
        case .not(let inner): return inner.needsServer
        case .all(let parts), .any(let parts): return parts.contains { $0.needsServer }
        }
    }
}
