import Foundation
import RoostDrivers
@_spi(Testing) import RoostHTTP
@_spi(Testing) import RoostServer

/// Registrations one address may make per hour on a test server (the suite registers thousands
/// of users from 127.0.0.1); the registration throttle's tests set their own limit.
public let testRegistrationsPerAddress = 1_000_000

/// How a test's requests reach its server: through the responder chain as wire bytes, with no
/// socket (the default for the API suites: they test answers, not connections), or over TCP (the
/// wire suites, and every suite when `ROOST_TEST_TRANSPORT=live`).
public enum TestTransport: String, Sendable {
    case inProcess = "in-process"
    case live

    /// `ROOST_TEST_TRANSPORT` (`live` or `in-process`), else in-process.
    public static var current: TestTransport {
        ProcessInfo.processInfo.environment["ROOST_TEST_TRANSPORT"].flatMap(TestTransport.init(rawValue:))
            ?? .inProcess
    }
}

/// A Roost server for one test: a fresh temporary data folder and an ephemeral port.
public final class TestServer: Sendable {
    public let application: Application
    public let dataDirectory: String
    /// Sends each request through the server's ``TestTransport``.
    public let client: TestHTTPClient
    /// Sends each request over a real connection, whatever the transport.
    public let liveClient: TestHTTPClient

    /// Starts a server; `configure` may change the configuration first. The server listens in
    /// either transport; `transport` decides how ``client`` reaches it.
    public init(
        dataDirectory: String? = nil, transport: TestTransport = .current,
        configure: (inout ServerConfiguration) -> Void = { _ in }
    )
        async throws
    {
        let directory = dataDirectory ?? TestServer.makeTemporaryDirectory()
        var configuration = ServerConfiguration()
        configuration.port = 0
        configuration.dataDirectory = directory
        configuration.accessLog = false
        configuration.loopCount = 2
        // The test binary is not roost: script workers run the roost binary built beside it.
        configuration.scripts.workerExecutable = try RoostProcess.binaryPath()
        configuration.scripts.workers = 2
        // Generous: a script's time includes its data calls, on a machine busy with the whole suite.
        configuration.scripts.timeout = 60
        // Tests scrape /metrics from this machine; the tests of who may scrape set their own.
        configuration.metricsAllowed = try TrustedProxies("127.0.0.0/8,::1")
        // Every test registers its users from 127.0.0.1; the throttle's own tests set a low limit.
        configuration.loginLimits.registrationsPerAddress = testRegistrationsPerAddress
        if TestBackend.current == .postgres {
            configuration.databaseURL = try await TestBackend.databaseURL(for: directory)
            configuration.databaseConnections = 3
            // Tests leave servers running; their idle connections must not fill the cluster.
            configuration.databaseIdleTimeout = .seconds(1)
        }
        configure(&configuration)
        application = try Application(configuration: configuration)
        try await application.start()
        self.dataDirectory = directory
        liveClient = TestHTTPClient(port: application.port)
        switch transport {
        case .live:
            client = liveClient
        case .inProcess:
            client = TestHTTPClient(port: application.port) { [application] in await application.exchange($0)
            }
        }
    }

    /// The port the server listens on.
    public var port: Int { application.port }

    /// Stops the server, keeping the data folder.
    public func stop() async { await application.shutdown() }

    /// A new empty folder under the system's temporary folder.
    public static func makeTemporaryDirectory() -> String {
        let path = NSTemporaryDirectory() + "roost-test-" + UUID().uuidString
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }
}

/// Waits (politely) until `condition` holds or `seconds` pass; returns whether it held.
public func eventually(within seconds: Double = 10, _ condition: () async throws -> Bool) async rethrows
    -> Bool
{
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        if try await condition() { return true }
        try? await Task.sleep(for: .milliseconds(20))
    }
    return try await condition()
}
