import Foundation

/// A value guarded by an `NSLock`: what `Synchronization.Mutex` does, on every OS the SDK
/// supports (Mutex needs iOS 18 and macOS 15).
final class Locked<Value>: @unchecked Sendable {
    // Safe to share: `value` is only touched while `lock` is held.
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) {
        self.value = value
    }

    /// Runs `body` with the value, holding the lock.
    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
