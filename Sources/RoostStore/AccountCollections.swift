/// The collections that hold users and groups, as the domain (RoostCore's
/// `AccountCollections.builtIn`) names them. The stores keep an account beside its user object
/// and a group's `group_members` rows beside the group; they decide nothing about either.
public struct AccountCollections: Sendable, Equatable {
    /// The collection of user objects, one per account.
    public var users: String
    /// The collection whose objects are groups.
    public var groups: String
    /// The member of a group object that lists its users.
    public var groupMembers: String
    /// How a reference to a user starts (`/ff/resources/FFUser/`); compared without case.
    public var userReferencePrefix: String

    public init(users: String, groups: String, groupMembers: String, userReferencePrefix: String) {
        self.users = users
        self.groups = groups
        self.groupMembers = groupMembers
        self.userReferencePrefix = userReferencePrefix
    }
}
