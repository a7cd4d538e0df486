import Foundation
import RoostCore
import RoostHTTP
import RoostServer
import RoostStore

/// A command-line mistake; printed with a hint to `--help`, exit status 64.
struct UsageError: Error {
    let message: String
}

/// One `roost serve` option: its flag, environment variable, help text and how it applies.
struct ServeOption: Sendable {
    let flag: String
    let variable: String
    let valueName: String
    let help: String
    let apply: @Sendable (inout ServerConfiguration, String) throws -> Void

    static let all: [ServeOption] =
        general + access + database + events + blobStore + scripts + push + mail + signIn

    static let general: [ServeOption] = [
        ServeOption(
            flag: "--host", variable: "ROOST_HOST", valueName: "ADDRESS",
            help: "address to listen on (default 127.0.0.1; 0.0.0.0 for all)"
        ) {
            $0.host = $1
        },
        ServeOption(
            flag: "--port", variable: "ROOST_PORT", valueName: "PORT",
            help: "TCP port (default 8080; 0 picks a free one)"
        ) {
            $0.port = try integer($1, flag: "--port", range: 0...65535)
        },
        ServeOption(
            flag: "--data-dir", variable: "ROOST_DATA_DIR", valueName: "PATH",
            help: "folder for the database and blobs (default ./roost-data)"
        ) {
            $0.dataDirectory = $1
        },
        ServeOption(
            flag: "--app", variable: "ROOST_APP", valueName: "FILE",
            help: "app definition (roost.json): rules, indexes, settings; reloaded on SIGHUP"
        ) {
            $0.appDefinitionPath = $1
        },
        ServeOption(
            flag: "--threads", variable: "ROOST_THREADS", valueName: "N",
            help: "event-loop threads (default: one per core)"
        ) {
            $0.loopCount = try integer($1, flag: "--threads", range: 1...256)
        },
        ServeOption(
            flag: "--max-body-size", variable: "ROOST_MAX_BODY_SIZE", valueName: "SIZE",
            help: "largest request body, e.g. 10MiB or 65536 (default 10MiB)"
        ) {
            $0.maxBodyBytes = try size($1, flag: "--max-body-size")
        },
        ServeOption(
            flag: "--max-blob-size", variable: "ROOST_MAX_BLOB_SIZE", valueName: "SIZE",
            help: "largest blob upload, streamed to disk (default 50MiB)"
        ) {
            $0.maxBlobBytes = try size($1, flag: "--max-blob-size")
        },
        ServeOption(
            flag: "--read-timeout", variable: "ROOST_READ_TIMEOUT", valueName: "SECONDS",
            help: "time a request may take to arrive (default 30)"
        ) {
            $0.readTimeout = try integer($1, flag: "--read-timeout", range: 1...3600)
        },
        ServeOption(
            flag: "--idle-timeout", variable: "ROOST_IDLE_TIMEOUT", valueName: "SECONDS",
            help: "time a keep-alive connection may sit idle (default 60)"
        ) {
            $0.idleTimeout = try integer($1, flag: "--idle-timeout", range: 1...3600)
        },
        ServeOption(
            flag: "--write-timeout", variable: "ROOST_WRITE_TIMEOUT", valueName: "SECONDS",
            help:
                "time an answer may wait for the client to read any of it before the connection is closed (default 60)"
        ) {
            $0.writeTimeout = try integer($1, flag: "--write-timeout", range: 1...3600)
        },
        ServeOption(
            flag: "--query-timeout", variable: "ROOST_QUERY_TIMEOUT", valueName: "SECONDS",
            help: "time one list, query, count or random pick may run before 503 query_timeout (default 5)"
        ) {
            $0.readLimits.timeout = .seconds(try integer($1, flag: "--query-timeout", range: 1...600))
        },
        ServeOption(
            flag: "--query-threads", variable: "ROOST_QUERY_THREADS", valueName: "N",
            help: "threads that run queries off the event loops (default: the number of cores, at least 2)"
        ) {
            $0.readLimits.threads = try integer($1, flag: "--query-threads", range: 1...64)
        },
        ServeOption(
            flag: "--max-connections", variable: "ROOST_MAX_CONNECTIONS", valueName: "N",
            help: "open connections at most; more get 503 (default 10000, less under a lower 'ulimit -n')"
        ) {
            $0.maxConnections = try integer($1, flag: "--max-connections", range: 1...10_000_000)
        },
        ServeOption(
            flag: "--max-connections-per-client", variable: "ROOST_MAX_CONNECTIONS_PER_CLIENT",
            valueName: "N",
            help:
                "open connections from one client address (an IPv6 /64 as one; --trusted-proxies not counted); more get 503 (default 256)"
        ) {
            $0.maxConnectionsPerClient = try integer(
                $1, flag: "--max-connections-per-client", range: 1...10_000_000)
        },
        ServeOption(
            flag: "--max-uploads", variable: "ROOST_MAX_UPLOADS", valueName: "N",
            help: "blob uploads received at once; more get 503 (default 64)"
        ) {
            $0.maxUploads = try integer($1, flag: "--max-uploads", range: 1...100_000)
        },
        ServeOption(
            flag: "--max-uploads-per-client", variable: "ROOST_MAX_UPLOADS_PER_CLIENT", valueName: "N",
            help: "blob uploads one client address may send at once; more get 503 (default 4)"
        ) {
            $0.maxUploadsPerClient = try integer($1, flag: "--max-uploads-per-client", range: 1...100_000)
        },
        ServeOption(
            flag: "--min-upload-rate", variable: "ROOST_MIN_UPLOAD_RATE", valueName: "BYTES",
            help:
                "bytes per second an upload must average after --read-timeout; slower get 408 (default 1024)"
        ) {
            $0.minimumUploadRate = try integer($1, flag: "--min-upload-rate", range: 1...1_000_000_000)
        },
        ServeOption(
            flag: "--durability", variable: "ROOST_DURABILITY", valueName: "normal|full",
            help: "normal survives crashes; full also survives power loss (default normal)"
        ) {
            guard let durability = Durability(rawValue: $1) else {
                throw UsageError(message: "--durability takes 'normal' or 'full', not '\($1)'")
            }
            $0.durability = durability
        },
        ServeOption(
            flag: "--session-policy", variable: "ROOST_SESSION_POLICY", valueName: "POLICY",
            help: "perDevice (default), singleDevice or unlimited tokens per user"
        ) {
            guard let policy = SessionPolicy(rawValue: $1) else {
                throw UsageError(
                    message: "--session-policy takes perDevice, singleDevice or unlimited, not '\($1)'")
            }
            $0.sessionPolicy = policy
        },
        ServeOption(
            flag: "--token-lifetime", variable: "ROOST_TOKEN_LIFETIME", valueName: "DURATION",
            help: "how long an unused token lives, e.g. 30d, 12h, 3600 (default 30d)"
        ) {
            $0.tokenLifetime = try duration($1, flag: "--token-lifetime")
        },
        ServeOption(
            flag: "--refresh-tokens", variable: "ROOST_REFRESH_TOKENS", valueName: "off|optional|always",
            help:
                "short-lived access tokens with rotating refresh tokens: never, when a login asks, or always (default off)"
        ) {
            guard let mode = RefreshMode(rawValue: $1) else {
                throw UsageError(message: "--refresh-tokens takes off, optional or always, not '\($1)'")
            }
            $0.refreshMode = mode
        },
        ServeOption(
            flag: "--access-token-lifetime", variable: "ROOST_ACCESS_TOKEN_LIFETIME", valueName: "DURATION",
            help: "how long an access token of a session that refreshes lives, e.g. 15m (default 15m)"
        ) {
            let message = "--access-token-lifetime takes a duration from 1m to 1d such as 15m, not '\($1)'"
            guard let seconds = try? duration($1, flag: "--access-token-lifetime"),
                (60...86_400).contains(seconds)
            else { throw UsageError(message: message) }
            $0.accessTokenLifetime = seconds
        },
        ServeOption(
            flag: "--access-log", variable: "ROOST_ACCESS_LOG", valueName: "on|off",
            help: "one line per request on standard output (default on)"
        ) {
            guard $1 == "on" || $1 == "off" else {
                throw UsageError(message: "--access-log takes 'on' or 'off', not '\($1)'")
            }
            $0.accessLog = $1 == "on"
        },
        ServeOption(
            flag: "--trusted-proxies", variable: "ROOST_TRUSTED_PROXIES", valueName: "CIDR,...",
            help:
                "reverse proxies whose forwarding header (see --proxy-header) and X-Request-Id are believed, e.g. 127.0.0.1,10.0.0.0/8 (default none)"
        ) {
            do {
                $0.trustedProxies = try TrustedProxies($1, header: $0.trustedProxies.header)
            } catch let error as TrustedProxiesError {
                throw UsageError(message: error.message)
            }
        },
        ServeOption(
            flag: "--cors-origins", variable: "ROOST_CORS_ORIGINS", valueName: "ORIGIN,...",
            help:
                "browser origins that may call the API, e.g. https://app.example.com (or *); adds to the app definition's cors.allowedOrigins"
        ) {
            $0.corsOrigins = try corsOrigins($1)
        },
        ServeOption(
            flag: "--public-dir", variable: "ROOST_PUBLIC_DIR", valueName: "PATH",
            help: "a web app's folder, served on the API's origin (index.html, no listings)"
        ) {
            guard StaticHosting.isUsableFolder($1) else {
                throw UsageError(message: "--public-dir: '\($1)' is not a folder Roost can read")
            }
            $0.publicDirectory = $1
        },
        ServeOption(
            flag: "--app-prefix", variable: "ROOST_APP_PREFIX", valueName: "NAME",
            help: "FatFractal's app name in URLs: /NAME/ff/... is /ff/..., /NAME/file a --public-dir file"
        ) {
            guard ObjectService.isValidCollection($1), $1 != "ff" else {
                throw UsageError(
                    message:
                        "--app-prefix takes a name of letters, digits and '_' other than 'ff', not '\($1)'")
            }
            $0.appPrefix = $1
        },
        ServeOption(
            flag: "--log-level", variable: "ROOST_LOG_LEVEL", valueName: "LEVEL",
            help: "error, warn, info (default) or debug: the least severe line written to standard error"
        ) {
            guard let level = Logger.Level(name: $1) else {
                throw UsageError(message: "--log-level takes error, warn, info or debug, not '\($1)'")
            }
            $0.logLevel = level
        },
        ServeOption(
            flag: "--log-format", variable: "ROOST_LOG_FORMAT", valueName: "text|json",
            help: "log and access-log lines as text (default) or as one JSON object per line"
        ) {
            guard let format = Logger.Format(rawValue: $1) else {
                throw UsageError(message: "--log-format takes 'text' or 'json', not '\($1)'")
            }
            $0.logFormat = format
        },
        ServeOption(
            flag: "--tls-cert", variable: "ROOST_TLS_CERT", valueName: "FILE",
            help: "serve HTTPS with this certificate chain (PEM, leaf first); reloaded on SIGHUP"
        ) {
            $0.tlsCertificatePath = $1
        },
        ServeOption(
            flag: "--tls-key", variable: "ROOST_TLS_KEY", valueName: "FILE",
            help: "the private key of --tls-cert (PEM, unencrypted); reloaded on SIGHUP"
        ) {
            $0.tlsKeyPath = $1
        },
        ServeOption(
            flag: "--tls-handshake-timeout", variable: "ROOST_TLS_HANDSHAKE_TIMEOUT", valueName: "SECONDS",
            help: "time a TLS handshake may take from the accept, at most --read-timeout (default 10)"
        ) {
            $0.tlsHandshakeTimeout = try integer($1, flag: "--tls-handshake-timeout", range: 1...3600)
        },
        ServeOption(
            flag: "--redirect-http", variable: "ROOST_REDIRECT_HTTP", valueName: "PORT",
            help: "also listen for plain HTTP on PORT and redirect every request to HTTPS (308)"
        ) {
            $0.redirectHTTPPort = try integer($1, flag: "--redirect-http", range: 0...65535)
        },
        ServeOption(
            flag: "--hsts", variable: "ROOST_HSTS", valueName: "on|off",
            help: "send Strict-Transport-Security: max-age=31536000 over HTTPS (default on)"
        ) {
            guard $1 == "on" || $1 == "off" else {
                throw UsageError(message: "--hsts takes 'on' or 'off', not '\($1)'")
            }
            $0.strictTransportSecurity = $1 == "on"
        },
    ]

    /// Parses `--cors-origins`: a comma-separated list of origins such as https://app.example.com.
    static func corsOrigins(_ text: String) throws -> [String] {
        let items = text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter {
            !$0.isEmpty
        }
        guard items.count <= AppDefinition.maximumAllowedOrigins else {
            throw UsageError(
                message: "--cors-origins takes at most \(AppDefinition.maximumAllowedOrigins) origins")
        }
        return try items.map { item in
            guard let origin = AppDefinition.normalizedOrigin(item) else {
                throw UsageError(
                    message:
                        "--cors-origins: '\(item)' is not an origin; write scheme://host[:port] with http or https and no path, such as https://app.example.com, or *"
                )
            }
            return origin
        }
    }

    /// The options that only make sense together.
    static func checkCombinations(_ configuration: ServerConfiguration) throws {
        try checkBlobStore(configuration)
        if let problem = configuration.push.providers.problem { throw UsageError(message: problem) }
        try checkMail(configuration)
        if (configuration.tlsCertificatePath == nil) != (configuration.tlsKeyPath == nil) {
            throw UsageError(message: "--tls-cert and --tls-key go together; give both")
        }
        if let redirect = configuration.redirectHTTPPort {
            guard configuration.tlsCertificatePath != nil else {
                throw UsageError(message: "--redirect-http needs --tls-cert and --tls-key")
            }
            guard redirect == 0 || redirect != configuration.port else {
                throw UsageError(message: "--redirect-http needs another port than --port")
            }
        }
    }

    static func integer(_ text: String, flag: String, range: ClosedRange<Int>) throws -> Int {
        guard let value = Int(text), range.contains(value) else {
            throw UsageError(
                message:
                    "\(flag) takes a whole number from \(range.lowerBound) to \(range.upperBound), not '\(text)'"
            )
        }
        return value
    }

    /// Parses `3600`, `90s`, `15m`, `12h` or `30d` into seconds.
    static func duration(_ text: String, flag: String) throws -> Int {
        let units: [Character: Int] = ["s": 1, "m": 60, "h": 3600, "d": 86400]
        var number = Substring(text)
        var multiplier = 1
        if let last = text.last, let unit = units[last] {
            number = text.dropLast()
            multiplier = unit
        }
        guard let value = Int(number), value > 0, value <= 3650 * 86400 / multiplier else {
            throw UsageError(message: "\(flag) takes a duration such as 30d, 12h or 3600, not '\(text)'")
        }
        return value * multiplier
    }

    /// Parses `65536`, `64KiB`, `10MiB`, `1GiB` (and the KB/MB/GB spellings, also as powers of 1024).
    static func size(_ text: String, flag: String) throws -> Int {
        let units: [(String, Int)] = [
            ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10), ("GB", 1 << 30), ("MB", 1 << 20),
            ("KB", 1 << 10), ("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10),
        ]
        var number = Substring(text)
        var multiplier = 1
        for (suffix, value) in units where text.hasSuffix(suffix) {
            number = text.dropLast(suffix.count)
            multiplier = value
            break
        }
        guard let value = Int(number), value > 0, value <= (1 << 40) / multiplier else {
            throw UsageError(message: "\(flag) takes a size such as 10MiB or 65536, not '\(text)'")
        }
        return value * multiplier
    }

    /// Reads environment variables first, then flags, which win.
    /// The configuration `arguments` and `environment` give, read with `options` (a command that
    /// shares some of serve's options, such as `roost push test`, passes only those).
    static func configuration(
        arguments: [String], environment: [String: String], options: [ServeOption] = all
    ) throws -> ServerConfiguration {
        var configuration = ServerConfiguration()
        for option in options {
            if let value = environment[option.variable], !value.isEmpty {
                try option.apply(&configuration, value)
            }
        }
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            let (flag, inlineValue): (String, String?) =
                if let equals = argument.firstIndex(of: "=") {
                    (String(argument[..<equals]), String(argument[argument.index(after: equals)...]))
                } else {
                    (argument, nil)
                }
            guard let option = options.first(where: { $0.flag == flag }) else {
                throw UsageError(message: "unknown option '\(argument)'")
            }
            let value: String
            if let inlineValue {
                value = inlineValue
            } else {
                index += 1
                guard index < arguments.count else {
                    throw UsageError(message: "\(flag) needs a value (\(option.valueName))")
                }
                value = arguments[index]
            }
            try option.apply(&configuration, value)
            index += 1
        }
        try checkCombinations(configuration)
        return configuration
    }
}

/// The words after an admin command's action, split into `--data-dir` (or `ROOST_DATA_DIR`) and the
/// positional arguments; nil (after printing why) on an unknown option.
func dataDirectoryAndNames(_ arguments: ArraySlice<String>, command: String) -> (
    dataDirectory: String, names: [String]
)? {
    databaseAndNames(arguments, command: command, acceptsDatabase: false).map {
        ($0.database.dataDirectory, $0.names)
    }
}

/// The words after an admin command's action, split into the database (`--data-dir`, and with
/// `acceptsDatabase` `--database`) and the positional arguments; nil (after printing why) on an
/// unknown option.
func databaseAndNames(_ arguments: ArraySlice<String>, command: String, acceptsDatabase: Bool = true) -> (
    database: CommandDatabase, names: [String]
)? {
    var database = CommandDatabase()
    if !acceptsDatabase { database.databaseURL = nil }
    var names: [String] = []
    var rest = arguments
    while let argument = rest.popFirst() {
        if argument == "--data-dir" || (acceptsDatabase && argument == "--database"),
            database.take(argument, value: { rest.popFirst() })
        {
            continue
        } else if argument.hasPrefix("-") {
            printError("unknown option '\(argument)'\nRun 'roost \(command) --help' for the options.")
            return nil
        } else {
            names.append(argument)
        }
    }
    return (database, names)
}
