import RoostQuery

/// What a caller may see of the objects that references point at, for queries that read through
/// references (`(diary.secret eq 'x')`): each referenced object must pass its own collection's read
/// restriction, and its owner-only fields count only when the caller created it.
///
/// The referenced collection is known only per row (from the reference's `ffUrl`), so the
/// compiler tests it against every collection named here and applies ``others`` to the rest.
public struct ReferenceAccess: Sendable {
    /// What one collection shows the caller.
    public struct Visibility: Sendable {
        /// The read restriction; nil when the caller sees every object.
        public var restriction: QueryExpression?
        /// Fields only an object's creator may read or match on.
        public var ownerOnlyFields: Set<String>

        public init(restriction: QueryExpression?, ownerOnlyFields: Set<String>) {
            self.restriction = restriction
            self.ownerOnlyFields = ownerOnlyFields
        }
    }

    /// Collections with a visibility of their own.
    public var collections: [String: Visibility]
    /// Every other collection.
    public var others: Visibility
    /// The caller's user guid; nil for anonymous callers.
    public var viewer: String?

    public init(collections: [String: Visibility], others: Visibility, viewer: String?) {
        self.collections = collections
        self.others = others
        self.viewer = viewer
    }

    /// Everything is visible: administrators, and reads the server makes for itself.
    public static let unrestricted = ReferenceAccess(
        collections: [:], others: Visibility(restriction: nil, ownerOnlyFields: []), viewer: nil)
}
