import Synchronization

/// The server's budget of bytes held for requests (``HTTPServer/Configuration/maxHeldRequestBytes``):
/// what connections have received and not yet answered, and what handlers reserve for the
/// documents they build from a body (a parsed JSON body takes many times its size).
public final class HeldBytes: Sendable {
    /// The bytes held at most.
    public let limit: Int
    private let held = Atomic<Int>(0)

    public init(limit: Int) {
        self.limit = limit
    }

    /// Bytes held now.
    public var current: Int { held.load(ordering: .relaxed) }

    /// Adds `count` (negative gives back); false when the total went over the limit (the bytes
    /// are counted all the same: the caller gives them back when it refuses).
    @discardableResult
    func charge(_ count: Int) -> Bool {
        let total = held.add(count, ordering: .relaxed).newValue
        return count <= 0 || total <= limit
    }

    /// Reserves `count` bytes if they fit under the limit; false (and nothing reserved) if not.
    public func reserve(_ count: Int) -> Bool {
        guard charge(count) else {
            held.subtract(count, ordering: .relaxed)
            return false
        }
        return true
    }

    /// Gives back what ``reserve(_:)`` took.
    public func release(_ count: Int) {
        held.subtract(count, ordering: .relaxed)
    }
}
