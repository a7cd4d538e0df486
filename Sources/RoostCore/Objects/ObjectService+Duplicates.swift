import RoostStore

extension ObjectService {
    /// A taken guid answers 409 only to a caller who may know the object exists: one who can
    /// read it, or who created it (so a create retried after a lost reply is recognised). Anyone
    /// else gets exactly the 404 a read of it gives, so a create is no oracle for hidden guids.
    func duplicateRefusal(collection: String, guid: String, caller: Principal?) async throws
        -> RoostError
    {
        let conflict = RoostError.conflict(collection: collection, guid: guid)
        guard let existing = try await store.object(in: collection, guid: guid) else { return conflict }
        if let caller, existing.createdBy == caller.userGuid { return conflict }
        return try access(caller).canRead(existing) ? conflict : .notFound(collection: collection, guid: guid)
    }
}
