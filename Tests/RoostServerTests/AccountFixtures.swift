import Foundation
import RoostCore
import RoostServer
import RoostTestSupport
import Synchronization
import Testing

/// Collects access-log output.
final class LogCapture: Sendable {
    private let bytes = Mutex<[UInt8]>([])
    func append(_ new: [UInt8]) { bytes.withLock { $0 += new } }
    var text: String { bytes.withLock { String(decoding: $0, as: UTF8.self) } }
}

/// A server with cheap password hashing (tests need speed, not strength) and a manual clock.
func makeAccountServer(
    clock: ManualWallClock = ManualWallClock(), policy: SessionPolicy = .perDevice, log: LogCapture? = nil,
    limits: LoginThrottle.Limits = LoginThrottle.Limits()
) async throws -> TestServer {
    try await TestServer { configuration in
        configuration.clock = clock
        configuration.sessionPolicy = policy
        configuration.passwordHasher = PasswordHasher.cheapForTests()
        configuration.loginLimits = limits
        configuration.loginLimits.registrationsPerAddress = testRegistrationsPerAddress
        if let log {
            configuration.accessLog = true
            configuration.accessLogSink = { log.append($0) }
        }
    }
}

extension TestHTTPClient {
    /// Registers a user and returns the JSON answer.
    func register(_ userName: String, password: String = "correct horse", extra: String = "") async throws
        -> TestResponse
    {
        try await send(
            "POST", "/ff/register", json: #"{"userName":"\#(userName)","password":"\#(password)"\#(extra)}"#)
    }

    /// Logs in and returns the token.
    func login(_ userName: String, password: String = "correct horse", device: String? = nil) async throws
        -> String
    {
        let deviceField = device.map { #","deviceId":"\#($0)""# } ?? ""
        let response = try await send(
            "POST", "/ff/login",
            json: #"{"userName":"\#(userName)","password":"\#(password)"\#(deviceField)}"#)
        guard response.status == 200, let token = response.json["token"] as? String else {
            throw TestClientError(description: "login failed: \(response.status) \(response.text)")
        }
        return token
    }
}

/// Runs a registration that must be refused beside an existing account (alice), and checks
/// that it stored nothing: still one user.
func expectRegistrationRefused(_ scenario: APIScenario) async throws {
    let server = try await makeAccountServer()
    let alice = try await server.client.register("alice", extra: #","email":"alice@example.com""#)
    #expect(alice.status == 201)
    try await scenario.run(against: server)
    let users = try await server.client.send(
        "GET", "/ff/resources/FFUser?total=true", headers: [("X-Token", alice.json["token"] as! String)])
    #expect(users.json["total"] as? Int == 1)
    await server.stop()
}
