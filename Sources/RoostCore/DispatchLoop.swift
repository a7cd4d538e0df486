import Synchronization

/// The loop a dispatcher of a durable outbox runs in: a round after every wake and every
/// `pollInterval` as the fallback (a lost wake-up, another instance's lease lapsing, retries
/// coming due), one round at a time, more rounds at once while a round says there is more.
/// It owns its tasks: ``stop()`` cancels and joins them.
public final class DispatchLoop: Sendable {
    /// One round; true when there may be more to do at once.
    public typealias Round = @Sendable () async throws -> Bool

    let pollInterval: Duration
    private let wakes: AsyncStream<Void>
    private let continuation: AsyncStream<Void>.Continuation
    private let tasks = Mutex<[Task<Void, Never>]>([])

    public init(pollInterval: Duration) {
        self.pollInterval = pollInterval
        (wakes, continuation) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    /// Asks for a round soon; wakes that come while one runs make one more, not one each.
    public func wake() { continuation.yield() }

    /// Starts the rounds; `failed` hears a round's error (the next wake tries again).
    public func start(_ round: @escaping Round, failed: @escaping @Sendable (any Error) -> Void) {
        let interval = pollInterval
        let started = [
            Task(executorPreference: globalConcurrentExecutor) { [wakes] in
                for await _ in wakes {
                    while !Task.isCancelled {
                        do {
                            guard try await round() else { break }
                        } catch {
                            if !Task.isCancelled { failed(error) }
                            break
                        }
                    }
                }
            },
            Task(executorPreference: globalConcurrentExecutor) { [continuation] in
                while !Task.isCancelled {
                    continuation.yield()
                    try? await Task.sleep(for: interval)
                }
            },
        ]
        tasks.withLock { $0 += started }
    }

    /// Ends the rounds (one in progress is cancelled) and waits for them.
    public func stop() async {
        continuation.finish()
        let running = tasks.withLock { tasks in
            defer { tasks = [] }
            return tasks
        }
        running.forEach { $0.cancel() }
        for task in running { await task.value }
    }
}
