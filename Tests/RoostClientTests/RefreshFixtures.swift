import Foundation
import RoostClient
import RoostTestSupport
import Synchronization

/// Forwards to the real server over URLSession; a test can take the network away (all of it,
/// or only for `POST /ff/refresh`) and act after an answer arrives, as a phone's network would.
final class SwitchableTransport: Transport {
    let inner: URLSessionTransport
    private let offline = Atomic<Bool>(false)
    private let refreshOffline = Atomic<Bool>(false)
    private let tokens = Mutex<[String]>([])
    private let exchangeAttempts = Atomic<Int>(0)
    private let onSend: @Sendable (TransportRequest) -> Void
    private let onAnswer: @Sendable (TransportRequest, TransportResponse) -> Void

    init(
        port: Int, onSend: @escaping @Sendable (TransportRequest) -> Void = { _ in },
        onAnswer: @escaping @Sendable (TransportRequest, TransportResponse) -> Void = { _, _ in }
    ) {
        inner = URLSessionTransport(serverURL: URL(string: "http://127.0.0.1:\(port)")!, timeout: 30)
        self.onSend = onSend
        self.onAnswer = onAnswer
    }

    /// Whether nothing reaches the server.
    func setOffline(_ value: Bool) { offline.store(value, ordering: .relaxed) }
    /// Whether exchanges of refresh tokens fail before reaching the server.
    func setRefreshOffline(_ value: Bool) { refreshOffline.store(value, ordering: .relaxed) }
    /// The bearer tokens requests carried, in order.
    var sentTokens: [String] { tokens.withLock { $0 } }
    /// How many exchanges the client tried, answered or not.
    var refreshAttempts: Int { exchangeAttempts.load(ordering: .relaxed) }

    func send(_ request: TransportRequest) async throws -> TransportResponse {
        if request.path == "/ff/refresh" { exchangeAttempts.add(1, ordering: .relaxed) }
        if offline.load(ordering: .relaxed)
            || (request.path == "/ff/refresh" && refreshOffline.load(ordering: .relaxed))
        {
            throw RoostError(status: nil, code: "network_unreachable", message: "offline")
        }
        if let bearer = request.headers["Authorization"], bearer.hasPrefix("Bearer ") {
            tokens.withLock { $0.append(String(bearer.dropFirst(7))) }
        }
        onSend(request)
        let response = try await inner.send(request)
        onAnswer(request, response)
        return response
    }
}

/// The time of `clock`, as the SDK reads it.
func dates(of clock: ManualWallClock) -> @Sendable () -> Date {
    { Date(timeIntervalSince1970: Double(clock.nowMilliseconds()) / 1000) }
}

/// A client that asks for refresh tokens and reads the time from `clock`.
func makeRefreshingClient(
    port: Int, clock: ManualWallClock, storage: String = TestServer.makeTemporaryDirectory(),
    transport: (any Transport)? = nil, credentials: (any CredentialStore)? = nil, requests: Bool = true
) throws -> Roost {
    try makeClient(port: port, storage: storage, transport: transport, credentials: credentials) {
        configuration in
        configuration.requestsRefreshTokens = requests
        configuration.now = dates(of: clock)
    }
}

/// The credential a client keeps in its storage folder's file, nil when there is none.
func storedCredential(in storage: String) throws -> Credential? {
    guard let data = FileManager.default.contents(atPath: storage + "/credential.json") else { return nil }
    return try JSONDecoder().decode(Credential.self, from: data)
}

extension TestServer {
    /// How many refresh tokens the server exchanged (its /metrics).
    func exchanges() async throws -> Int { try await answered(route: "/ff/refresh", status: 200) }

    /// Exchanges `refreshToken` as another device would; the answer's status and code.
    func exchange(_ refreshToken: String) async throws -> (Int, String?) {
        let response = try await client.send(
            "POST", "/ff/refresh", json: #"{"refreshToken":"\#(refreshToken)"}"#)
        return (response.status, response.json["code"] as? String)
    }
}

/// The client's usual credential file, whose next saves can be made to fail (a full disk).
final class FailingCredentialStore: CredentialStore {
    let inner: FileCredentialStore
    private let failing = Atomic<Int>(0)

    init(storage: String) {
        inner = FileCredentialStore(path: storage + "/credential.json")
    }

    /// Makes the next `count` saves fail.
    func failSaves(_ count: Int) { failing.store(count, ordering: .relaxed) }

    func load() throws -> Credential? { try inner.load() }

    func save(_ credential: Credential) throws {
        if failing.load(ordering: .relaxed) > 0 {
            failing.subtract(1, ordering: .relaxed)
            throw CocoaError(.fileWriteOutOfSpace)
        }
        try inner.save(credential)
    }

    func clear() throws { try inner.clear() }
}
