import CLibEvent
import Foundation
import RoostThreads
import Synchronization

/// One libevent `event_base` running on its own thread.
///
/// Connections belong to exactly one loop and are touched only on its thread; other threads reach
/// the loop through ``execute(_:)``, which queues a job and wakes the loop.
// @unchecked Sendable: the C handles and `connections` are only used on the loop's own thread
// (asserted in debug builds by ``preconditionInLoop()``); the job queue that other threads use
// is a Mutex.
final class EventLoop: @unchecked Sendable {
    let base: OpaquePointer
    let index: Int
    private let jobs = Mutex<[@Sendable () -> Void]>([])
    private var wakeEvent: OpaquePointer?
    private var tickEvent: OpaquePointer?
    private var listener: OpaquePointer?
    /// Re-enables accepting after the descriptors ran out.
    private var resumeAcceptEvent: OpaquePointer?
    /// The loop's thread, once ``start()`` ran.
    private let thread = Mutex<OwnedThread?>(nil)
    var connections: [ObjectIdentifier: Connection] = [:]
    /// The client each counted connection holds a slot of ``HTTPServer/connectionsPerClient`` for.
    private var connectionClients: [ObjectIdentifier: String] = [:]
    var isDraining = false
    // Strong: the server drops its loops at shutdown, which breaks the cycle.
    let server: HTTPServer
    let dateCache = HTTPDateCache()
    /// Pieces of streamed responses on their way to this loop's connections (ResponseStream.swift).
    let streamWrites = StreamWriteQueue()

    init(index: Int, server: HTTPServer) throws {
        guard let base = event_base_new() else {
            throw HTTPServerError(message: "could not create an event loop")
        }
        self.base = base
        self.index = index
        self.server = server
        let context = Unmanaged.passUnretained(self).toOpaque()
        wakeEvent = event_new(
            base, -1, roost_ev_persist(),
            { _, _, context in
                Unmanaged<EventLoop>.fromOpaque(context!).takeUnretainedValue().runJobs()
            }, context)
        tickEvent = event_new(
            base, -1, roost_ev_persist(),
            { _, _, context in
                Unmanaged<EventLoop>.fromOpaque(context!).takeUnretainedValue().tick()
            }, context)
        var second = timeval(tv_sec: 1, tv_usec: 0)
        event_add(tickEvent, &second)
        resumeAcceptEvent = event_new(
            base, -1, 0,
            { _, _, context in
                Unmanaged<EventLoop>.fromOpaque(context!).takeUnretainedValue().resumeAccepting()
            }, context)
    }

    deinit {
        if let listener { evconnlistener_free(listener) }
        if let wakeEvent { event_free(wakeEvent) }
        if let tickEvent { event_free(tickEvent) }
        if let resumeAcceptEvent { event_free(resumeAcceptEvent) }
        event_base_free(base)
    }

    /// Starts accepting on a listening socket shared with the other loops.
    func listen(on socket: Int32) throws {
        let context = Unmanaged.passUnretained(self).toOpaque()
        listener = evconnlistener_new(
            base,
            { _, fd, address, _, context in
                let loop = Unmanaged<EventLoop>.fromOpaque(context!).takeUnretainedValue()
                loop.accept(fd, address: address)
            }, context, roost_lev_opt_close_on_exec(), 0, socket)
        guard listener != nil else { throw HTTPServerError(message: "could not listen on the socket") }
        // Without this callback libevent logs every failed accept and, the socket staying
        // readable, spins: at the descriptor limit that was a core and megabytes of warnings a second.
        evconnlistener_set_error_cb(
            listener,
            { _, context in
                let error = errno
                Unmanaged<EventLoop>.fromOpaque(context!).takeUnretainedValue().acceptFailed(error)
            })
    }

    /// Accepting failed (out of descriptors, most likely): pause it for a moment, warn once.
    private func acceptFailed(_ error: Int32) {
        preconditionInLoop()
        guard let listener, !isDraining else { return }
        evconnlistener_disable(listener)
        var pause = timeval(tv_sec: 0, tv_usec: Int(HTTPServer.acceptPauseMilliseconds) * 1000)
        event_add(resumeAcceptEvent, &pause)
        server.warnAcceptFailure(error)
    }

    private func resumeAccepting() {
        preconditionInLoop()
        guard let listener, !isDraining else { return }
        evconnlistener_enable(listener)
    }

    /// Runs `job` on the loop thread: at once when already there.
    func run(_ job: @escaping @Sendable () -> Void) {
        if inLoopThread { job() } else { execute(job) }
    }

    /// Runs the loop on a new thread until ``stop()``.
    func start() {
        // Stored by the thread itself too, before the loop runs: its first callback may come
        // before `OwnedThread`'s init returns here.
        let started = OwnedThread(name: "roost-loop-\(index)") { [self] owned in
            thread.withLock { $0 = owned }
            event_base_loop(base, 0)
        }
        thread.withLock { $0 = started }
    }

    /// Queues a job to run on the loop thread; safe from any thread.
    func execute(_ job: @escaping @Sendable () -> Void) {
        let wasEmpty = jobs.withLock { queue in
            queue.append(job)
            return queue.count == 1
        }
        if wasEmpty { event_active(wakeEvent, Int32(roost_ev_read()), 0) }
    }

    /// Whether the caller runs on this loop's thread.
    var inLoopThread: Bool {
        thread.withLock { $0 }?.isCurrent ?? false
    }

    /// Stops a debug build when the caller is not on this loop's thread: the entry points of
    /// what is confined to the loop (connections, streamed writes) call it. Nothing in release.
    @inline(__always)
    func preconditionInLoop(file: StaticString = #fileID, line: UInt = #line) {
        assert(inLoopThread, "called off the event loop's thread", file: file, line: line)
    }

    /// Ends the loop and returns once its thread has finished (resumed by that thread, so no
    /// semaphore blocks a cooperative thread).
    func stop() async {
        execute { [self] in
            for connection in Array(connections.values) { connection.close() }
            event_base_loopbreak(self.base)
        }
        await thread.withLock { $0 }?.join()
    }

    /// Stops accepting and closes idle connections; busy ones close after their response.
    func beginDraining() {
        execute { [self] in
            isDraining = true
            if let listener { evconnlistener_disable(listener) }
            for connection in connections.values where connection.isIdle { connection.close() }
            // Streams never finish on their own: they end now, after what they have sent.
            for connection in Array(connections.values) where connection.streaming != nil {
                connection.endStream()
            }
        }
    }

    private func runJobs() {
        preconditionInLoop()
        let batch = jobs.withLock { queue in
            let taken = queue
            queue.removeAll(keepingCapacity: true)
            return taken
        }
        for job in batch { job() }
    }

    private func accept(_ fd: Int32, address: UnsafeMutablePointer<sockaddr>?) {
        preconditionInLoop()
        if isDraining {
            close(fd)
            return
        }
        guard server.metrics.admitConnection(limit: server.connectionLimit) else {
            server.refuseConnection(fd)
            return
        }
        let remoteAddress = Self.describe(address)
        let client = server.connectionClient(remoteAddress)
        if let client,
            !server.connectionsPerClient.acquire(
                client, total: .max, perClient: server.configuration.maxConnectionsPerClient)
        {
            server.metrics.connectionClosed()
            server.refuseConnection(fd, perClient: true)
            return
        }
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        // One loop's accept takes a whole burst of connections (the first awake drains the
        // backlog): each goes to the loop holding the fewest, so long-lived ones (event streams)
        // spread over the loops and their cores instead of one loop writing to most of them.
        let target = server.loopForConnection(preferring: self)
        target.held.add(1, ordering: .relaxed)
        if target === self {
            adopt(fd, remoteAddress: remoteAddress, client: client)
        } else {
            target.execute { target.adopt(fd, remoteAddress: remoteAddress, client: client) }
        }
    }

    /// Connections this loop holds or has been handed and not yet taken.
    let held = Atomic<Int>(0)

    /// Takes a connection accepted (and admitted, its client's slot held) by this or another loop.
    private func adopt(_ fd: Int32, remoteAddress: String, client: String?) {
        preconditionInLoop()
        guard !isDraining, let connection = Connection(fd: fd, remoteAddress: remoteAddress, loop: self)
        else {
            held.subtract(1, ordering: .relaxed)
            if let client { server.connectionsPerClient.release(client) }
            server.metrics.connectionClosed()
            close(fd)
            return
        }
        connections[ObjectIdentifier(connection)] = connection
        if let client { connectionClients[ObjectIdentifier(connection)] = client }
    }

    func remove(_ connection: Connection) {
        preconditionInLoop()
        let id = ObjectIdentifier(connection)
        if connections.removeValue(forKey: id) != nil {
            held.subtract(1, ordering: .relaxed)
            server.metrics.connectionClosed()
        }
        if let client = connectionClients.removeValue(forKey: id) {
            server.connectionsPerClient.release(client)
        }
    }

    private func tick() {
        preconditionInLoop()
        let now = DispatchTime.now().uptimeNanoseconds
        var awaitingClient = 0
        for connection in Array(connections.values) {
            connection.checkDeadline(now: now)
            if connection.awaitsClient { awaitingClient += 1 }
        }
        server.metrics.setConnectionsAwaitingClient(awaitingClient, loop: index)
    }

    private static func describe(_ address: UnsafeMutablePointer<sockaddr>?) -> String {
        guard let address else { return "-" }
        var host = [CChar](repeating: 0, count: Int(NI_MAXHOST))
        let length = socklen_t(
            address.pointee.sa_family == sa_family_t(AF_INET6)
                ? MemoryLayout<sockaddr_in6>.size : MemoryLayout<sockaddr_in>.size)
        guard getnameinfo(address, length, &host, socklen_t(host.count), nil, 0, NI_NUMERICHOST) == 0 else {
            return "-"
        }
        return String(decoding: host.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// Formats the `Date` header once a second instead of once a request.
final class HTTPDateCache {
    private var second: time_t = 0
    private var cached = ""

    var current: String {
        var now = time(nil)
        if now != second {
            second = now
            var parts = tm()
            gmtime_r(&now, &parts)
            var buffer = [CChar](repeating: 0, count: 64)
            let length = strftime(&buffer, buffer.count, "%a, %d %b %Y %H:%M:%S GMT", &parts)
            cached = String(decoding: buffer.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
        return cached
    }
}

/// The server could not start or run.
public struct HTTPServerError: Error, Sendable, CustomStringConvertible {
    public let message: String
    public var description: String { message }
}

/// Handlers run on the loop that received their request, so a request that needs no other thread
/// (a read answered from SQLite's cache, say) costs no thread hand-offs. Work that may be slow
/// (password hashing, writes) runs on its own threads and resumes here.
extension EventLoop: TaskExecutor {
    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        execute { [self] in job.runSynchronously(on: asUnownedTaskExecutor()) }
    }
}
