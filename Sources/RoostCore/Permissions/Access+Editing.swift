import RoostJSON
import RoostStore

extension Access {
    /// Whether the caller may update the object an answer shows (FatFractal's `ffUserCanEdit`),
    /// judged from its served document and its access list (`acl`, nil for none) as a write is.
    public func mayUpdate(collection: String, document: [UInt8], createdBy: String?, acl: [UInt8]? = nil)
        -> Bool
    {
        let object = StoredObject(
            collection: collection, guid: "", document: document, createdBy: createdBy, createdAt: 0,
            updatedBy: nil, updatedAt: 0, version: 0, acl: acl)
        return (try? checkWrite(.update, object, body: nil)) != nil
    }
}
