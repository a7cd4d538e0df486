import Foundation
import RoostClient

/// Answers from a script, recording what was asked: for unit tests without a server.
final class ScriptedTransport: Transport {
    private let script: Guarded<[Result<TransportResponse, RoostError>]>
    private let sent = Guarded<[TransportRequest]>([])

    init(_ script: [Result<TransportResponse, RoostError>]) {
        self.script = Guarded(script)
    }

    var requests: [TransportRequest] { sent.withLock { $0 } }

    func send(_ request: TransportRequest) async throws -> TransportResponse {
        sent.withLock { $0.append(request) }
        let next = script.withLock { $0.isEmpty ? nil : $0.removeFirst() }
        guard let next else {
            throw RoostError(status: nil, code: "network_unreachable", message: "script ended")
        }
        return try next.get()
    }

    static func json(_ status: Int, _ body: String, headers: [String: String] = [:]) -> Result<
        TransportResponse, RoostError
    > {
        .success(TransportResponse(status: status, headers: headers, body: Data(body.utf8)))
    }

    static let unreachable = Result<TransportResponse, RoostError>.failure(
        RoostError(status: nil, code: "network_unreachable", message: "down"))
}

/// A value behind an `NSLock`, for test doubles shared across tasks.
final class Guarded<Value>: @unchecked Sendable {
    // Safe: `value` is only touched with `lock` held.
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) { self.value = value }

    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}

/// A client on scripted answers, with its own storage folder and no background delivery.
func makeUnitClient(
    _ transport: ScriptedTransport, credential: Credential? = nil,
    configure: (inout RoostConfiguration) -> Void = { _ in }
) throws -> Roost {
    var configuration = RoostConfiguration(
        serverURL: URL(string: "http://127.0.0.1:9")!,
        storageFolder: NSTemporaryDirectory() + "roost-unit-" + UUID().uuidString,
        credentialStore: InMemoryCredentialStore(credential), transport: transport)
    configuration.deliversInBackground = false
    configuration.retryInterval = 0.05
    configuration.offlineRetryInterval = 0.1
    configure(&configuration)
    return try Roost(configuration: configuration)
}

/// A stored object's JSON, as the server answers it.
func objectJSON(_ guid: String, version: Int = 1, _ fields: String) -> String {
    #"{"guid":"\#(guid)","ffUrl":"/ff/resources/Note/\#(guid)","createdBy":"u1","createdAt":1,"updatedBy":"u1","updatedAt":1,"version":\#(version),\#(fields)}"#
}

/// A Roost error body.
func errorJSON(_ status: Int, _ code: String) -> Result<TransportResponse, RoostError> {
    ScriptedTransport.json(status, #"{"status":\#(status),"code":"\#(code)","message":"m","details":{}}"#)
}
