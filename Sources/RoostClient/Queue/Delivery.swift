import Foundation

/// Where the background delivery of queued writes stands.
struct DeliveryState {
    enum OperationResult {
        case delivered(TransportResponse)
        case dropped(RoostError)
    }

    var loop: Task<Void, Never>?
    var pass: Task<FlushResult, Never>?
    var sleeper: CheckedContinuation<Void, Never>?
    var timer: Task<Void, Never>?
    /// A wake that came while no one slept: the next sleep returns at once.
    var wakeRequested = false
    var listeners: [UUID: AsyncStream<QueueEvent>.Continuation] = [:]
    /// Writes whose caller waits for their first attempt, and what came of it.
    var awaited: Set<String> = []
    var results: [String: OperationResult] = [:]
    /// Progress handlers of uploads whose caller waits for them.
    var progress: [String: ProgressHandler] = [:]
    /// The write whose owner was last reported as needed, so the event is not repeated.
    var reportedLoginWait: String?
}

/// What a delivery pass achieved.
public struct FlushResult: Sendable, Equatable {
    /// Why the pass stopped.
    public enum State: Sendable, Equatable {
        /// Nothing is left.
        case idle
        /// The next write failed in a way worth retrying, after this many seconds.
        case retrying(after: TimeInterval)
        /// The next write needs its owner to log in.
        case waitingForLogin
    }

    /// Writes the server took in this pass.
    public var delivered = 0
    /// Writes the server refused for good and the queue dropped.
    public var failed = 0
    /// Why the pass stopped.
    public var state = State.idle

    /// A result; tests compare against one.
    public init(delivered: Int = 0, failed: Int = 0, state: State = .idle) {
        self.delivered = delivered
        self.failed = failed
        self.state = state
    }
}

extension Roost {
    /// Writes waiting in the queue, oldest first (for a "not yet sent" badge).
    public var pendingOperations: [QueuedOperation] { log.operations }

    /// A stream of what happens to queued writes; each call makes a new stream.
    public func queueEvents() -> AsyncStream<QueueEvent> {
        let (stream, continuation) = AsyncStream.makeStream(of: QueueEvent.self)
        let id = UUID()
        delivery.listeners[id] = continuation
        continuation.onTermination = { [weak self] _ in
            Task { await self?.removeListener(id) }
        }
        return stream
    }

    private func removeListener(_ id: UUID) {
        delivery.listeners[id] = nil
    }

    func emit(_ event: QueueEvent) {
        for listener in delivery.listeners.values { listener.yield(event) }
    }

    /// Sends queued writes now, in order, until the queue is empty or one must wait; returns
    /// what happened. Safe to call while the background delivery runs: passes never overlap.
    @discardableResult
    public func flush() async -> FlushResult {
        while let running = delivery.pass {
            _ = await running.value
            // Whoever wakes first clears a finished pass; awaiting it again would never yield.
            if delivery.pass == running { delivery.pass = nil }
        }
        let pass = Task { await self.deliverPending() }
        delivery.pass = pass
        let result = await pass.value
        if delivery.pass == pass { delivery.pass = nil }
        return result
    }

    /// Stops the background delivery (queued writes stay on disk for the next launch).
    public func close() {
        delivery.loop?.cancel()
        delivery.loop = nil
        wakeDelivery()
        for listener in delivery.listeners.values { listener.finish() }
        delivery.listeners = [:]
    }

    func startDelivery() {
        guard delivery.loop == nil else { return }
        delivery.loop = Task { await self.deliverForever() }
    }

    private func deliverForever() async {
        while !Task.isCancelled {
            switch await flush().state {
            case .idle, .waitingForLogin: await sleep(for: nil)
            case .retrying(let interval): await sleep(for: interval)
            }
        }
    }

    /// Sleeps until woken (a new write, a login, ``close()``) or, with an interval, until it passes.
    private func sleep(for interval: TimeInterval?) async {
        if delivery.wakeRequested || Task.isCancelled {
            delivery.wakeRequested = false
            return
        }
        await withCheckedContinuation { continuation in
            delivery.sleeper = continuation
            if let interval {
                delivery.timer = Task { [weak self] in
                    try? await Task.sleep(nanoseconds: UInt64(interval * 1_000_000_000))
                    if !Task.isCancelled { await self?.wakeDelivery() }
                }
            }
        }
    }

    func wakeDelivery() {
        delivery.timer?.cancel()
        delivery.timer = nil
        if let sleeper = delivery.sleeper {
            delivery.sleeper = nil
            sleeper.resume()
        } else {
            delivery.wakeRequested = true
        }
    }

    /// How many times one pass rebases writes on the server's newer versions before it waits.
    static var rebasesPerPass: Int { 5 }

    /// One pass over the queue, oldest first.
    private func deliverPending() async -> FlushResult {
        var result = FlushResult()
        // A server that keeps moving on (or keeps answering 412) must not hold a pass forever.
        var rebases = 0
        while var operation = log.operations.first {
            if let owner = operation.owner, owner != credential?.userGuid {
                reportLoginWait(operation)
                result.state = .waitingForLogin
                return result
            }
            operation.attempts += 1
            // Counted before sending, so a crash mid-send still counts; losing the count costs nothing.
            try? log.store(operation)
            let outcome: Result<TransportResponse, RoostError>
            do {
                // A body kept in a file is streamed from it, never read whole.
                let file = log.bodyFileURL(of: operation)
                let request = operation.request(body: file == nil ? log.body(of: operation) : nil)
                outcome = .success(
                    try await send(
                        request, owner: .some(operation.owner),
                        transfer: file.map { .upload($0, delivery.progress[operation.id]) }))
            } catch {
                outcome = .failure(error as? RoostError ?? RoostError.storageFailed("send", error))
            }
            var verdict = DeliveryVerdict.judge(operation, outcome)
            var answer = try? outcome.get()
            if verdict == .confirmCreate {
                (verdict, answer) = await confirmCreate(operation, conflict: answer)
            } else if case .delivered = verdict, answer?.status == 409, operation.kind != .delete {
                // Done, but the answer was lost on the server: the object as it is now stands in.
                answer = try? await send(
                    TransportRequest(
                        method: "GET", path: Self.objectPath(operation.collection, operation.guid)),
                    owner: .some(operation.owner))
                if answer?.status != 200 { answer = TransportResponse(status: 204) }
            }
            switch verdict {
            case .delivered(let version):
                finish(operation, with: .delivered(answer ?? TransportResponse(status: 204)))
                if let version, operation.kind != .delete {
                    rebaseQueue(after: operation, newVersion: version)
                }
                result.delivered += 1
            case .drop(let error):
                finish(operation, with: .dropped(error))
                result.failed += 1
            case .waitForLogin:
                reportLoginWait(operation)
                result.state = .waitingForLogin
                return result
            case .retry(let after, let reachable), .confirmCreateRetry(let after, let reachable):
                let interval = reachable ? configuration.retryInterval : configuration.offlineRetryInterval
                let wait = max(after ?? interval, interval)
                emit(.deferred(operation, retryAfter: wait, reachable: reachable))
                result.state = .retrying(after: wait)
                return result
            case .confirmCreate:
                break
            case .conflict:
                rebases += 1
                if rebases > Self.rebasesPerPass {
                    result.state = .retrying(after: configuration.retryInterval)
                    return result
                }
                switch await settleConflict(operation) {
                case .resend: continue
                case .settled(let current):
                    finish(operation, with: .delivered(current))
                    result.delivered += 1
                case .drop(let error):
                    finish(operation, with: .dropped(error))
                    result.failed += 1
                case .retry(let reachable):
                    result.state = .retrying(
                        after: reachable ? configuration.retryInterval : configuration.offlineRetryInterval)
                    return result
                }
            }
        }
        return result
    }

    /// A create answered 409 `conflict`: if the object with its guid is the owner's, an earlier
    /// attempt landed and only its reply was lost.
    private func confirmCreate(_ operation: QueuedOperation, conflict: TransportResponse?) async
        -> (DeliveryVerdict, TransportResponse?)
    {
        let request = TransportRequest(
            method: "GET", path: Self.objectPath(operation.collection, operation.guid))
        guard let response = try? await send(request, owner: .some(operation.owner)) else {
            return (.confirmCreateRetry(after: nil, reachable: false), nil)
        }
        if response.status == 200,
            let metadata = try? Wire.decode(ObjectMetadata.self, from: response.body),
            metadata.createdBy == operation.owner
        {
            return (.delivered(version: metadata.version), response)
        }
        return (.drop(conflict.map(RoostError.from) ?? RoostError.from(response)), conflict)
    }

    private func finish(_ operation: QueuedOperation, with result: DeliveryState.OperationResult) {
        do {
            try log.remove(operation.id)
        } catch {
            // The write is done on the server; if the mark is lost, a resend is answered from the
            // server's idempotency record, so nothing is repeated.
        }
        delivery.reportedLoginWait = nil
        if delivery.awaited.contains(operation.id) {
            delivery.results[operation.id] = result
        }
        switch result {
        case .delivered(let response):
            remember(response, of: operation)
            emit(.sent(operation, status: response.status))
        case .dropped(let error):
            emit(.failed(operation, error))
        }
    }

    private func rebaseQueue(after operation: QueuedOperation, newVersion: Int) {
        let rebased = log.operations.rebased(after: operation, newVersion: newVersion)
        for (old, new) in zip(log.operations, rebased) where old != new {
            try? log.store(new)
        }
    }

    private func reportLoginWait(_ operation: QueuedOperation) {
        guard delivery.reportedLoginWait != operation.id else { return }
        delivery.reportedLoginWait = operation.id
        emit(.waitingForLogin(operation))
    }
}
