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

extension DispatchLoop {
    /// Sends a round's claimed items, at most `concurrency` at a time, while the dispatcher holds
    /// its lease (claimed just before, for `lease`): a send that would start once a third of the
    /// lease has passed since the last claim claims it again first, and once it is lost no more
    /// start. The instance that took it over puts what this one claimed but never sent back in the
    /// queue and sends it; without this, a round slower than the lease (a slow provider) let
    /// another instance resend what this one still had in flight.
    public static func sendUnderLease<Item: Sendable>(
        _ items: [Item], concurrency: Int, lease: Duration, clock: any WallClock,
        renew: () async throws -> Bool, send: @escaping @Sendable (Item) async throws -> Void
    ) async throws {
        let third =
            (lease.components.seconds * 1000 + lease.components.attoseconds / 1_000_000_000_000_000) / 3
        var claimedAt = clock.nowMilliseconds()
        try await withThrowingTaskGroup(of: Void.self) { group in
            var active = 0
            for item in items {
                if active >= max(1, concurrency) {
                    try await group.next()
                    active -= 1
                }
                if clock.nowMilliseconds() - claimedAt >= third {
                    guard try await renew() else { break }
                    claimedAt = clock.nowMilliseconds()
                }
                active += 1
                group.addTask { try await send(item) }
            }
            try await group.waitForAll()
        }
    }
}
