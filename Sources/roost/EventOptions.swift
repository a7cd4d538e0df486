import RoostCore
import RoostServer
import RoostStore

/// `roost serve` options for realtime streams and the change log.
extension ServeOption {
    static let events: [ServeOption] = [
        ServeOption(
            flag: "--events-retention", variable: "ROOST_EVENTS_RETENTION", valueName: "DURATION",
            help:
                "how long the change log keeps entries for resuming streams (default 24h; see --events-retention-entries)"
        ) {
            $0.events.retention.age = .seconds(try duration($1, flag: "--events-retention"))
        },
        ServeOption(
            flag: "--events-retention-entries", variable: "ROOST_EVENTS_RETENTION_ENTRIES", valueName: "N",
            help: "the change log keeps at least the newest N entries, however old (default 10000)"
        ) {
            $0.events.retention.entries = try integer(
                $1, flag: "--events-retention-entries", range: 1...100_000_000)
        },
        ServeOption(
            flag: "--events-max-streams", variable: "ROOST_EVENTS_MAX_STREAMS", valueName: "N",
            help: "open event streams at most; more get 503 (default 1000)"
        ) {
            $0.events.streams = try integer($1, flag: "--events-max-streams", range: 1...1_000_000)
        },
        ServeOption(
            flag: "--events-max-streams-per-user", variable: "ROOST_EVENTS_MAX_STREAMS_PER_USER",
            valueName: "N",
            help: "event streams one user (or anonymous client address) may hold; more get 429 (default 8)"
        ) {
            $0.events.streamsPerUser = try integer(
                $1, flag: "--events-max-streams-per-user", range: 1...10_000)
        },
        ServeOption(
            flag: "--events-max-streams-per-client", variable: "ROOST_EVENTS_MAX_STREAMS_PER_CLIENT",
            valueName: "N",
            help:
                "event streams one client address (an IPv6 /64 as one) may hold, whoever is logged in; more get 429 (default 64)"
        ) {
            $0.events.streamsPerClient = try integer(
                $1, flag: "--events-max-streams-per-client", range: 1...1_000_000)
        },
        ServeOption(
            flag: "--events-max-subscriptions", variable: "ROOST_EVENTS_MAX_SUBSCRIPTIONS", valueName: "N",
            help: "subscriptions one event stream may carry; more get 400 (default 16)"
        ) {
            $0.events.subscriptionsPerStream = try integer(
                $1, flag: "--events-max-subscriptions", range: 1...1000)
        },
        ServeOption(
            flag: "--events-buffer", variable: "ROOST_EVENTS_BUFFER", valueName: "SIZE",
            help: "unsent bytes an event stream may hold for a client that reads slowly (default 1MiB)"
        ) {
            $0.events.bufferedBytes = try size($1, flag: "--events-buffer")
        },
        ServeOption(
            flag: "--events-memory", variable: "ROOST_EVENTS_MEMORY", valueName: "SIZE",
            help:
                "bytes of events all streams may hold together, each event once however many streams it goes to; past half of it, streams 5 s behind are cut and resume (default 64MiB)"
        ) {
            $0.events.heldBytes = try size($1, flag: "--events-memory")
        },
        ServeOption(
            flag: "--events-slow-reader-timeout", variable: "ROOST_EVENTS_SLOW_READER_TIMEOUT",
            valueName: "DURATION",
            help:
                "how long a stream may stay backed up by a client that does not read before it is cut off (default 30s)"
        ) {
            $0.events.slowReaderTimeout = .seconds(try duration($1, flag: "--events-slow-reader-timeout"))
        },
    ]
}
