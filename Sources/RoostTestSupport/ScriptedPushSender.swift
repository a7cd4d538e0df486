import RoostCore
import Synchronization

/// Stands in for APNs and FCM in tests: records every send and answers what the test scripted
/// for the token (by the number of earlier sends to it), delivered by default. `holding` keeps
/// sends waiting until ``release()``, as a provider that never answers.
public final class ScriptedPushSender: PushSender {
    public struct Send: Sendable, Equatable {
        public let notification: PushNotification
        public let target: PushTarget
    }

    private let state = Mutex<(sends: [Send], held: Bool, waiting: [CheckedContinuation<Void, Never>])>(
        ([], false, []))
    private let answer: @Sendable (PushTarget, Int) -> PushOutcome

    public init(
        holding: Bool = false,
        answer: @escaping @Sendable (PushTarget, Int) -> PushOutcome = { _, _ in .delivered(providerID: nil) }
    ) {
        self.answer = answer
        state.withLock { $0.held = holding }
    }

    /// Every send so far, in order.
    public var sends: [Send] { state.withLock { $0.sends } }

    /// The tokens sent to, in order.
    public var tokens: [String] { sends.map(\.target.token) }

    /// Lets held sends (and later ones) answer.
    public func release() {
        let waiting = state.withLock { state in
            state.held = false
            defer { state.waiting = [] }
            return state.waiting
        }
        waiting.forEach { $0.resume() }
    }

    public func send(_ notification: PushNotification, to target: PushTarget) async -> PushOutcome {
        let (earlier, held) = state.withLock { state in
            let earlier = state.sends.filter { $0.target.token == target.token }.count
            state.sends.append(Send(notification: notification, target: target))
            return (earlier, state.held)
        }
        if held {
            await withCheckedContinuation { continuation in
                let resumeNow = state.withLock { state in
                    guard state.held else { return true }
                    state.waiting.append(continuation)
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        }
        return answer(target, earlier)
    }

    public func shutdown() async { release() }
}
