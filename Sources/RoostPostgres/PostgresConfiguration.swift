import CLibPQ
import Foundation

/// Where the PostgreSQL database is and how Roost uses it.
public struct PostgresConfiguration: Sendable {
    /// A postgres:// or postgresql:// URL, or libpq's key=value string, as given (set only by
    /// parsing, so that ``redacted`` always knows the password).
    public private(set) var connectionString: String
    /// Connections in the pool, each on its own thread.
    public var poolSize: Int = 8
    /// Jobs that may wait for a connection; beyond it a job fails at once with `StoreError.busy`.
    public var maxQueuedJobs: Int = 256
    /// `statement_timeout` of every session: a statement running longer is stopped by the server.
    public var statementTimeout: Duration = .seconds(5)
    /// How long a pool connection may stay idle before it is closed (the next job reconnects).
    public var idleConnectionTimeout: Duration = .seconds(60)
    /// Seconds libpq waits for a connection when the string does not say (`connect_timeout`).
    public var connectTimeoutSeconds: Int = 3
    /// Whether connections prepare statements they run twice (off only to measure the gain).
    var preparesStatements = true

    /// The password in the string, percent-decoded; kept to scrub it from libpq's messages.
    let password: String?
    /// The connection options libpq parsed from the string, in its order.
    private var options: [(keyword: String, value: String)]

    /// Parses `connectionString`; throws ``PostgresError`` saying what is expected when it is
    /// neither a postgres:// or postgresql:// URL nor a key=value string libpq accepts.
    public init(connectionString: String) throws {
        let trimmed = connectionString.trimmingSpaces
        if let scheme = trimmed.range(of: "://").map({ String(trimmed[..<$0.lowerBound]) }),
            !trimmed.contains(" ")
        {
            guard scheme == "postgres" || scheme == "postgresql" else {
                throw Self.malformed("it starts with \(scheme.prefix(20))://")
            }
        } else if !trimmed.contains("=") {
            throw Self.malformed("it is neither a URL nor key=value pairs")
        }
        var errorMessage: UnsafeMutablePointer<CChar>?
        guard let parsed = PQconninfoParse(trimmed, &errorMessage) else {
            // libpq's message may quote the string, password included: it is not shown.
            if let errorMessage { PQfreemem(errorMessage) }
            throw Self.malformed("libpq cannot parse it")
        }
        defer { PQconninfoFree(parsed) }
        var options: [(keyword: String, value: String)] = []
        var option = parsed
        while let keyword = option.pointee.keyword {
            if let value = option.pointee.val {
                options.append((String(cString: keyword), String(cString: value)))
            }
            option += 1
        }
        self.connectionString = trimmed
        self.options = options
        password = options.first { $0.keyword == "password" }?.value
    }

    private static func malformed(_ reason: String) -> PostgresError {
        PostgresError(
            message:
                "The database URL is not valid (\(reason)). Expected postgres://user:password@host:port/database "
                + "(or postgresql://…), or libpq's key=value pairs such as \"host=/run/postgresql dbname=roost\"."
        )
    }

    /// The connection string with any password replaced by `***`, for logs and errors.
    public var redacted: String {
        guard password != nil else { return connectionString }
        if connectionString.contains("://") { return Self.redactingURL(connectionString) }
        return options.map { "\($0.keyword)=\($0.keyword == "password" ? "***" : Self.quoted($0.value))" }
            .joined(separator: " ")
    }

    /// The same database server with another database name (for tests that make their own), as
    /// a key=value string.
    public func replacingDatabase(with name: String) -> PostgresConfiguration {
        var copy = self
        copy.options = options.filter { $0.keyword != "dbname" } + [(keyword: "dbname", value: name)]
        copy.connectionString = copy.options.map { "\($0.keyword)=\(Self.quoted($0.value))" }
            .joined(separator: " ")
        return copy
    }

    /// What libpq is given: the string, with Roost's defaults for what it does not set.
    var libpqConnectionString: String {
        var extra: [String] = ["client_encoding=UTF8"]
        if !options.contains(where: { $0.keyword == "application_name" }) {
            extra.append("application_name=roost")
        }
        if !options.contains(where: { $0.keyword == "connect_timeout" }) {
            extra.append("connect_timeout=\(connectTimeoutSeconds)")
        }
        if connectionString.contains("://") {
            // libpq takes further settings as URL query parameters.
            let separator = connectionString.contains("?") ? "&" : "?"
            return connectionString + separator + extra.joined(separator: "&")
        }
        return connectionString + " " + extra.joined(separator: " ")
    }

    /// `statement_timeout` in whole milliseconds (at least 1: 0 would mean no limit).
    var statementTimeoutMilliseconds: Int64 {
        let (seconds, attoseconds) = statementTimeout.components
        return max(1, seconds * 1000 + attoseconds / 1_000_000_000_000_000)
    }

    /// `text` without the password (raw or percent-encoded) wherever it appears.
    func scrubbed(_ text: String) -> String {
        guard let password, password.count >= 3 else { return text }
        var result = text.replacingAll(password, with: "***")
        if let encoded = Self.rawPassword(in: connectionString), encoded.count >= 3 {
            result = result.replacingAll(encoded, with: "***")
        }
        return result
    }

    /// The password as written in a URL's user info, percent-encoding and all.
    private static func rawPassword(in url: String) -> String? {
        guard let authority = url.range(of: "://")?.upperBound else { return nil }
        let rest = url[authority...]
        guard let at = rest.firstIndex(where: { $0 == "@" || $0 == "/" }), rest[at] == "@" else { return nil }
        let userInfo = rest[..<at]
        guard let colon = userInfo.firstIndex(of: ":") else { return nil }
        return String(userInfo[userInfo.index(after: colon)...])
    }

    /// A URL with the user info's password and any `password=` query parameter replaced by ***.
    private static func redactingURL(_ url: String) -> String {
        var result = url
        if rawPassword(in: url) != nil, let authority = url.range(of: "://")?.upperBound {
            let rest = url[authority...]
            if let at = rest.firstIndex(of: "@"), let colon = rest[..<at].firstIndex(of: ":") {
                result = String(url[..<rest.index(after: colon)]) + "***" + String(url[at...])
            }
        }
        guard let query = result.firstIndex(of: "?") else { return result }
        let parameters = result[result.index(after: query)...].split(
            separator: "&", omittingEmptySubsequences: false
        )
        .map { parameter -> String in
            parameter.hasPrefix("password=") ? "password=***" : String(parameter)
        }
        return String(result[...query]) + parameters.joined(separator: "&")
    }

    /// A value as libpq's key=value syntax needs it: quoted when empty or holding spaces or quotes.
    private static func quoted(_ value: String) -> String {
        guard value.isEmpty || value.contains(where: { $0 == " " || $0 == "'" || $0 == "\\" }) else {
            return value
        }
        return "'" + value.replacingAll("\\", with: "\\\\").replacingAll("'", with: "\\'") + "'"
    }
}

extension String {
    var trimmingSpaces: String { trimmingCharacters(in: .whitespacesAndNewlines) }

    func replacingAll(_ target: String, with replacement: String) -> String {
        replacingOccurrences(of: target, with: replacement)
    }
}
