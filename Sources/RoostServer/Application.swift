import Foundation
import RoostCore
import RoostHTTP
import RoostJSON
import RoostStore

/// Everything `roost serve` can be told.
public struct ServerConfiguration: Sendable {
    public var host = "127.0.0.1"
    public var port = 8080
    public var dataDirectory = "./roost-data"
    public var loopCount = ProcessInfo.processInfo.activeProcessorCount
    public var maxBodyBytes = 10 * 1024 * 1024
    public var readTimeout = 30
    public var idleTimeout = 60
    public var durability = Durability.normal
    public var accessLog = true
    /// Where timestamps come from; tests set a fixed clock.
    public var clock: any Clock = SystemClock()
    /// Where guids come from; tests set a predictable source.
    public var guids: any GuidGenerator = RandomGuidGenerator()

    public init() {}
}

/// A running Roost: the store, the services and the HTTP server wired together.
public final class Application: Sendable {
    public let configuration: ServerConfiguration
    private let server: HTTPServer

    /// Opens the data folder and prepares the server; ``start()`` begins listening.
    public init(configuration: ServerConfiguration) throws {
        self.configuration = configuration
        let store = try SQLiteObjectStore(
            directory: configuration.dataDirectory, durability: configuration.durability)
        let metrics = HTTPMetrics()
        var router = Router(errorResponse: ErrorBoundary.response)
        ObjectRoutes(
            service: ObjectService(store: store, clock: configuration.clock, guids: configuration.guids)
        ).register(in: &router)
        SystemRoutes(metrics: metrics).register(in: &router)
        let httpConfiguration = HTTPServer.Configuration(
            host: configuration.host, port: configuration.port, loopCount: configuration.loopCount,
            limits: RequestLimits(maxBodyBytes: configuration.maxBodyBytes),
            readTimeout: configuration.readTimeout,
            idleTimeout: configuration.idleTimeout, accessLog: configuration.accessLog ? AccessLog() : nil,
            errorBody: ErrorBoundary.protocolResponse)
        server = HTTPServer(configuration: httpConfiguration, responder: router, metrics: metrics)
    }

    /// Starts listening; returns once connections are accepted.
    public func start() throws { try server.start() }

    /// The port listened on, useful when the configuration asked for port 0.
    public var port: Int { server.port }

    /// Finishes requests in flight, then stops.
    public func shutdown() async { await server.shutdown() }
}

/// `/health` and `/metrics`.
struct SystemRoutes: Sendable {
    let metrics: HTTPMetrics

    func register(in router: inout Router) {
        router.on(.get, "/health") { _ in Response.json(200, Array("{\"status\":\"ok\"}".utf8)) }
        router.on(.get, "/metrics") { [metrics] _ in
            var headers = HTTPHeaders()
            headers.set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
            return Response(status: 200, headers: headers, body: Array(metrics.render().utf8))
        }
    }
}
