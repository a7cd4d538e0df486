import RoostJSON
import RoostStore

extension Access {
    /// Whether the caller may update the object an answer shows (FatFractal's `ffUserCanEdit`),
    /// judged from its served document and the collection's `update` rule. An access list is not
    /// part of the document, so a write granted only by `ffACL` reads as false here.
    public func mayUpdate(collection: String, document: [UInt8], createdBy: String?) -> Bool {
        let object = StoredObject(
            collection: collection, guid: "", document: document, createdBy: createdBy, createdAt: 0,
            updatedBy: nil, updatedAt: 0, version: 0)
        return (try? checkWrite(.update, object, body: nil)) != nil
    }
}
