/// The FFDL statements that change an app rather than declare one (`DROP …`, which FatFractal's
/// `executeFFDL` callers send), and the system user's settings.
extension FFDLImport {
    /// `DROP COLLECTION /Name` removes the collection's declaration (its objects stay: with
    /// `allowNewCollections` it is still written to, under the `*` or default rules);
    /// `DROP OBJECTTYPE Name` has nothing to remove, Roost being schemaless.
    mutating func drop(_ kind: String, _ words: [String], line: String, number: Int) {
        switch kind {
        case "COLLECTION":
            guard words.count == 3, let name = Self.collectionName(words[2]) else {
                return record(number, line, .notTranslated, "expects DROP COLLECTION /Name")
            }
            guard !Self.builtInCollections.contains(name) else {
                return record(number, line, .notTranslated, "\(name) is built in: it cannot be dropped")
            }
            collections[name] = nil
            if !droppedCollections.contains(name) { droppedCollections.append(name) }
            record(number, line, .translated, "removes collections.\(name); its objects stay")
        case "OBJECTTYPE":
            record(number, line, .notNeeded, "Roost is schemaless: object types need no declaration")
        default:
            record(number, line, .notTranslated, "Roost has no equivalent of DROP \(kind)")
        }
    }

    /// The collections every app has.
    static let builtInCollections: Set<String> = [
        AccountService.userCollection, AppDefinition.groupCollection,
    ]

    /// Why FatFractal's system-user settings are not translated: the password never comes from a
    /// definition (FatFractal's samples ship `systemsystem`); the operator gives it to the server.
    static func systemUserSetting(_ lowered: String) -> String? {
        switch lowered {
        case "systemuserpassword":
            "the system user's password is never read from the definition: give it to the server with roost serve --system-password-file (docs/fatfractal.md)"
        case "allowsystemusertologin":
            "the system user logs in only when the server has --system-password-file (docs/fatfractal.md)"
        default: nil
        }
    }
}
