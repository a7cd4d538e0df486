import CLibPQ
import Foundation
import RoostThreads
import Synchronization

/// Hears `NOTIFY` on a few channels over a connection of its own, on a thread of its own, and
/// calls each channel's handlers when a notification arrives, and also every ``recheckInterval``
/// whatever arrived: the periodic re-check is the fallback where notifications are lost (while
/// reconnecting) or missing (a PostgreSQL-compatible engine without `LISTEN`). Handlers must
/// return at once; they are hints to re-read the database, never data.
public final class PostgresListener: Sendable {
    /// How often every handler runs even without a notification.
    public static let recheckInterval: Duration = .seconds(1)

    private struct State {
        var handlers: [String: [@Sendable () -> Void]] = [:]
        var stopping = false
    }

    private let configuration: PostgresConfiguration
    private let channels: [String]
    private let state = Mutex(State())
    private let thread = Mutex<OwnedThread?>(nil)

    /// Starts listening on `channels` (lowercase identifiers Roost chose).
    public init(configuration: PostgresConfiguration, channels: [String]) {
        self.configuration = configuration
        self.channels = channels
        let started = OwnedThread(name: "roost-pg-listen") { [self] _ in run() }
        thread.withLock { $0 = started }
    }

    /// Adds a handler for one of the channels.
    public func onNotification(_ channel: String, _ handler: @escaping @Sendable () -> Void) {
        state.withLock { $0.handlers[channel, default: []].append(handler) }
    }

    /// Stops the thread and closes its connection; returns once both are done.
    public func stop() async {
        let first = state.withLock { state in
            defer { state.stopping = true }
            return !state.stopping
        }
        guard first else { return }
        // The thread sees `stopping` within a recheck interval, closes its connection and ends.
        await thread.withLock { $0 }?.join()
    }

    private var isStopping: Bool { state.withLock { $0.stopping } }

    private func notify(_ channel: String?) {
        let handlers = state.withLock { state in
            channel.map { state.handlers[$0] ?? [] } ?? state.handlers.values.flatMap { $0 }
        }
        for handler in handlers { handler() }
    }

    private func run() {
        let interval = Int(Self.recheckInterval.components.seconds * 1000)
        var backoff = 100
        var lastRecheck = ContinuousClock.now
        while !isStopping {
            guard let connection = connect() else {
                notify(nil)
                sleepUnlessStopping(milliseconds: backoff)
                backoff = min(backoff * 2, 5000)
                continue
            }
            backoff = 100
            // What changed while no connection listened is found by the handlers' re-read.
            notify(nil)
            while !isStopping {
                let ready = roost_pq_wait_readable(connection, Int32(interval))
                if ready < 0 || (ready > 0 && PQconsumeInput(connection) == 0) { break }
                var heard: Set<String> = []
                while let notification = PQnotifies(connection) {
                    heard.insert(String(cString: notification.pointee.relname))
                    PQfreemem(notification)
                }
                for channel in heard { notify(channel) }
                if ContinuousClock.now - lastRecheck >= Self.recheckInterval {
                    lastRecheck = ContinuousClock.now
                    notify(nil)
                }
                if PQstatus(connection) != CONNECTION_OK { break }
            }
            PQfinish(connection)
        }
    }

    private func connect() -> OpaquePointer? {
        guard let connection = PQconnectdb(configuration.libpqConnectionString) else { return nil }
        guard PQstatus(connection) == CONNECTION_OK else {
            PQfinish(connection)
            return nil
        }
        roost_pq_silence_notices(connection)
        let listen = channels.map { "LISTEN \($0);" }.joined(separator: " ")
        let result = PQexec(connection, listen)
        defer { PQclear(result) }
        guard PQresultStatus(result) == PGRES_COMMAND_OK else {
            PQfinish(connection)
            return nil
        }
        return connection
    }

    private func sleepUnlessStopping(milliseconds: Int) {
        var left = milliseconds
        while left > 0, !isStopping {
            usleep(UInt32(min(left, 100) * 1000))
            left -= 100
        }
    }
}
