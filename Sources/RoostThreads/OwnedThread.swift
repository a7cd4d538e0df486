import Foundation
import Synchronization

/// A thread of its own for work that is not a queue of jobs (an event loop's run, say): started
/// named, like a pool's threads, and joined without blocking the caller.
public final class OwnedThread: Sendable {
    private struct State {
        var id: pthread_t?
        var ended = false
        var joiners: [CheckedContinuation<Void, Never>] = []
    }
    private let state = Mutex(State())
    public let name: String

    /// Starts a thread named `name` that runs `body`, which is handed this thread.
    public init(name: String, _ body: @escaping @Sendable (OwnedThread) -> Void) {
        self.name = name
        startNamedThread(name) { [self] in
            state.withLock { $0.id = pthread_self() }
            body(self)
            let joiners = state.withLock { state in
                state.id = nil
                state.ended = true
                defer { state.joiners = [] }
                return state.joiners
            }
            for joiner in joiners { joiner.resume() }
        }
    }

    /// Whether the caller runs on this thread.
    public var isCurrent: Bool {
        guard let id = state.withLock({ $0.id }) else { return false }
        return pthread_equal(id, pthread_self()) != 0
    }

    /// Returns once the thread has ended (resumed by that thread: nothing blocks a cooperative
    /// thread).
    public func join() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ended = state.withLock { state in
                if !state.ended { state.joiners.append(continuation) }
                return state.ended
            }
            if ended { continuation.resume() }
        }
    }
}

/// Starts a thread named `name` running `body`: the one way Roost starts a thread.
func startNamedThread(_ name: String, _ body: @escaping @Sendable () -> Void) {
    let thread = Thread {
        // Named from inside, with the kernel's own call: Foundation's setter on Linux names the
        // kernel thread only once the parent has stored the new thread's handle, which under load
        // came after the first job ran (the job saw the creating thread's name).
        nameCurrentThread(name)
        body()
    }
    thread.name = name
    thread.start()
}

/// Names the calling thread for `ps`, `top` and debuggers (the kernel keeps 15 bytes).
func nameCurrentThread(_ name: String) {
    Thread.current.name = name
    #if os(Linux)
        // What pthread_setname_np does (Glibc's module does not export it): the kernel's name
        // of the calling thread is its /proc comm file.
        if let file = fopen("/proc/thread-self/comm", "w") {
            fputs(String(decoding: name.utf8.prefix(15), as: UTF8.self), file)
            fclose(file)
        }
    #endif
}
