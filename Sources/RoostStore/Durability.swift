/// How hard SQLite works to keep a commit through a power cut.
public enum Durability: String, Sendable, CaseIterable {
    /// WAL with `synchronous=NORMAL`: survives any process crash; a power cut may lose the last commits.
    case normal
    /// WAL with `synchronous=FULL`: every acknowledged commit survives a power cut too.
    case full
}
