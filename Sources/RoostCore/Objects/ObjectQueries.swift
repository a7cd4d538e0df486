import RoostJSON
import RoostQuery
import RoostStore

/// Lists, queries, traversals and inlining, each limited to what the caller may read.
extension ObjectService {
    /// A page of a collection; an unknown collection is an empty one.
    public func list(_ request: PageRequest, caller: Principal?) async throws -> Page {
        try await list(request.listRequest(), caller: caller)
    }

    /// A page of a collection matching the request's filter.
    func list(_ request: ListRequest, caller: Principal?) async throws -> Page {
        try Self.validate(collection: request.collection)
        guard (1...Self.maximumPageSize).contains(request.count) else {
            throw RoostError.invalidParameter("count", "count must be between 1 and \(Self.maximumPageSize).")
        }
        guard request.start >= 0 else {
            throw RoostError.invalidParameter("start", "start must be 0 or more.")
        }
        let access = access(caller)
        let restricted = try restrict(request, access)
        var page = try await store.list(restricted)
        page.documents = try access.visibleDocuments(page.documents, in: request.collection)
        return Page(page)
    }

    /// The request with the caller's read restriction added and owner-only fields protected, on
    /// the object and on what its references point at. Throws `QueryError` when the filter is over
    /// a limit of ``QueryShape``.
    private func restrict(_ request: ListRequest, _ access: Access) throws -> ListRequest {
        try access.checkSort(request.sort, in: request.collection)
        var restricted = request
        if let filter = request.filter {
            let shape = QueryShape(filter)
            try shape.check()
            // Only a filter that reads through references needs to know what they may show.
            restricted.references = shape.joins > 0 ? access.referenceAccess() : nil
        }
        restricted.filter = access.limitingOwnerOnlyFields(request.filter, in: request.collection)
        restricted.restriction = access.listRestriction(request.collection)
        return restricted
    }

    /// The documents with referenced objects inlined `depth` levels deep (`?depthRef=N`, 0 to 3);
    /// references to objects the caller may not read stay references.
    public func inliningReferences(_ documents: [[UInt8]], depth: Int, caller: Principal?) async throws
        -> [[UInt8]]
    {
        guard (0...ReferenceResolver.maximumDepth).contains(depth) else {
            throw RoostError.invalidParameter(
                "depthRef", "depthRef must be between 0 and \(ReferenceResolver.maximumDepth).")
        }
        return try await ReferenceResolver(store: store, access: access(caller)).inline(
            documents, depth: depth)
    }

    /// The objects of `source` whose `field` refers to the given object (FatFractal's BackReferences).
    public func backReferences(
        to collection: String, guid: String, from source: String, field: FieldPath, _ request: PageRequest,
        caller: Principal?
    ) async throws -> Page {
        try Self.validate(collection: collection)
        try Self.validate(collection: source)
        // Memberships name their parents, readable or not: a bag is read through its parent.
        if source == AppDefinition.grabBagCollection, caller?.isAdmin != true {
            throw RoostError.collectionReserved
        }
        guard let reference = FieldPath(components: field.components + ["ffUrl"]) else {
            throw RoostError.invalidParameter(
                "field", "A back-reference field is a dotted path of at most 15 parts.")
        }
        var filtered = request.listRequest(
            filter: .comparison(reference, .eq, .string("/ff/resources/\(collection)/\(guid)")))
        filtered.collection = source
        do {
            return try await list(filtered, caller: caller)
        } catch let error as QueryError {
            throw RoostError.invalidParameter(
                "field", "The back-reference field is too long: \(error.message).")
        }
    }

    /// The objects that the `member` references of the matching objects point at, each once, in order
    /// (FatFractal's `/ff/resources/C/(query)/member`).
    public func traverse(query text: String, member: String, _ request: PageRequest, caller: Principal?)
        async throws -> Page
    {
        var all = request
        all.start = 0
        all.count = Self.maximumPageSize
        all.includeTotal = false
        let sources = try await find(query: text, all, caller: caller)
        var order: [(collection: String, guid: String)] = []
        var seen = Set<String>()
        for document in sources.documents {
            guard case .object(let object) = try JSONParser.parse(document), let value = object[member],
                let target = ReferenceResolver.reference(value),
                seen.insert("\(target.collection)/\(target.guid)").inserted
            else { continue }
            order.append(target)
        }
        let access = access(caller)
        var found: [String: [UInt8]] = [:]
        for (collection, guids) in Dictionary(grouping: order, by: \.collection) {
            let documents = try await store.objects(
                in: collection, guids: guids.map(\.guid), restriction: access.listRestriction(collection))
            for (guid, document) in documents {
                found["\(collection)/\(guid)"] = try access.visibleDocument(document, in: collection)
            }
        }
        let documents = order.compactMap { found["\($0.collection)/\($0.guid)"] }
        let page = Array(documents.dropFirst(request.start).prefix(request.count))
        return Page(documents: page, total: request.includeTotal ? documents.count : nil)
    }

    /// Objects matching a query in FatFractal's language, paged and sorted like ``list(_:caller:)``;
    /// with `guid eq random(guid)`, one matching object picked at random (or none).
    public func find(query text: String, _ request: PageRequest, caller: Principal?) async throws -> Page {
        try Self.validate(collection: request.collection)
        let plan: QueryPlan
        do {
            plan = try QueryPlan(QueryParser.parse(text))
        } catch {
            throw RoostError.invalidQuery(error, query: text)
        }
        let filtered = request.listRequest(filter: plan.filter)
        do {
            guard plan.pickRandom else { return try await list(filtered, caller: caller) }
            let access = access(caller)
            let restricted = try restrict(filtered, access)
            var page = try await store.randomPick(restricted)
            page.documents = try access.visibleDocuments(page.documents, in: request.collection)
            return Page(page)
        } catch let error as QueryError {
            throw RoostError.invalidQuery(error, query: text)
        }
    }
}
