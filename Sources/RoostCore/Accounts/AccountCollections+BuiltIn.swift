import RoostStore

extension AccountCollections {
    /// FatFractal's: users in `FFUser`, groups in `FFUserGroup` listing their members under
    /// `users` as guids or references. The domain's names, which the stores are given.
    public static let builtIn = AccountCollections(
        users: AccountService.userCollection, groups: AppDefinition.groupCollection, groupMembers: "users",
        userReferencePrefix: "/ff/resources/\(AccountService.userCollection)/")
}
