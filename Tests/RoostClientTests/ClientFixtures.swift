import Foundation
import RoostClient
import RoostTestSupport
import Synchronization

struct Note: RoostModel, Equatable {
    var text: String
    var count: Int?
}

struct Celebrity: RoostModel, Equatable {
    var name: String
    var gender: String
}

struct Micropost: RoostModel {
    var text: String
    var user: Ref<RoostUser>
}

/// A client of `port` with its own storage folder, short retry intervals and, unless asked,
/// no background delivery (tests call `flush()`).
func makeClient(
    port: Int, storage: String = TestServer.makeTemporaryDirectory(), transport: (any Transport)? = nil,
    credentials: (any CredentialStore)? = nil, background: Bool = false, cacheLimit: Int = 1 << 20,
    configure: (inout RoostConfiguration) -> Void = { _ in }
) throws -> Roost {
    let url = URL(string: "http://127.0.0.1:\(port)")!
    var configuration = RoostConfiguration(
        serverURL: url, storageFolder: storage,
        credentialStore: credentials ?? FileCredentialStore(path: storage + "/credential.json"),
        transport: transport ?? URLSessionTransport(serverURL: url, timeout: 30))
    configuration.retryInterval = 0.05
    configuration.offlineRetryInterval = 0.1
    configuration.deliversInBackground = background
    configuration.cacheLimit = cacheLimit
    configure(&configuration)
    return try Roost(configuration: configuration)
}

/// Forwards to the real server, but loses the answers of the requests `losing` says, after the
/// server has handled them: a reply lost on the way back.
final class LossyTransport: Transport {
    let inner: URLSessionTransport
    private let losing: @Sendable (TransportRequest) -> Bool
    private let lost = Atomic<Int>(0)

    init(port: Int, losing: @escaping @Sendable (TransportRequest) -> Bool) {
        inner = URLSessionTransport(serverURL: URL(string: "http://127.0.0.1:\(port)")!, timeout: 30)
        self.losing = losing
    }

    var lostCount: Int { lost.load(ordering: .relaxed) }

    func send(_ request: TransportRequest) async throws -> TransportResponse {
        let response = try await inner.send(request)
        if losing(request) {
            lost.add(1, ordering: .relaxed)
            throw RoostError(status: nil, code: "network_unreachable", message: "reply lost")
        }
        return response
    }
}

extension TestServer {
    /// How many objects a collection holds, read with plain HTTP.
    func count(_ collection: String) async throws -> Int {
        // One object and the total: cheap enough to poll while a client races to deliver.
        let response = try await client.send("GET", "/ff/resources/\(collection)?count=1&total=true")
        return response.json["total"] as? Int ?? -1
    }

    /// The items of a collection, read with plain HTTP.
    func items(_ collection: String) async throws -> [[String: Any]] {
        let response = try await client.send("GET", "/ff/resources/\(collection)?count=1000")
        return response.json["items"] as? [[String: Any]] ?? []
    }

    /// How many requests the server answered on `route` with `status`, from /metrics.
    func answered(route: String, status: Int) async throws -> Int {
        let metrics = try await client.send("GET", "/metrics").text
        let prefix = "roost_http_requests_total{route=\"\(route)\",status=\"\(status)\"} "
        guard let line = metrics.split(separator: "\n").first(where: { $0.hasPrefix(prefix) }) else {
            return 0
        }
        return Int(line.dropFirst(prefix.count)) ?? -1
    }
}
