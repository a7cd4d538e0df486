/// The app definition kept in a database that several instances share, so that one
/// `roost app apply --database URL` reaches them all. SQLite has none: one server reads its file.
public protocol SharedDefinitionStore: Sendable {
    /// The stored definition (its text, or since scripts a bundle of the text and the script
    /// modules; see `AppDefinitionFiles`) and revision; nil before the first apply.
    func storedDefinition() async throws -> (revision: Int64, text: [UInt8])?
    /// Stores `text` as the definition in force unless it is the stored one already; returns
    /// the revision that holds it. Every instance hears of a change.
    @discardableResult
    func storeDefinition(_ text: [UInt8], at now: Int64) async throws -> Int64
    /// Calls `observer` when the stored definition may have changed (a hint: read it again),
    /// from any thread; it must return at once.
    func observeChanges(_ observer: @escaping @Sendable () -> Void)
}
