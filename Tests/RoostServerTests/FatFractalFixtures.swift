import Foundation
import RoostCore
import RoostServer
import RoostTestSupport
import Testing

/// The headers FatFractal's SDKs put on every request, GET and DELETE included.
let fatFractalHeaders = [("Data-type", "application/json"), ("Content-type", "application/json")]

/// A server with predictable guids and clock and cheap hashing; `definition` as JSON text.
func makeFatFractalServer(definition: String = "{}") async throws -> TestServer {
    let parsed = try AppDefinition.parse(Array(definition.utf8))
    return try await TestServer { configuration in
        configuration.appDefinition = parsed
        configuration.passwordHasher = PasswordHasher.cheapForTests()
        configuration.clock = SteppingClock()
        configuration.guids = SequentialGuids()
    }
}

/// A FatFractal client's session after register or login.
struct FatFractalLogin {
    let sessionId: String
    let userGuid: String
    let answer: TestResponse

    /// The session as FatFractal.js sends it with simulated cookies.
    var authHeaders: [(String, String)] {
        [("X-Ff-Auth-Session-Id", sessionId), ("X-Ff-Auth-User-Guid", userGuid)]
    }
    /// The session as a browser (or the iOS SDK) sends it.
    var cookieHeader: (String, String) { ("Cookie", "sessionId=\(sessionId); userGuid=\(userGuid)") }
}

extension TestResponse {
    /// Every value of a repeated header, in order.
    func headerValues(_ name: String) -> [String] {
        headers.filter { $0.name.lowercased() == name.lowercased() }.map(\.value)
    }

    /// `result` of the envelope as an object.
    var result: [String: Any] { json["result"] as? [String: Any] ?? [:] }
}

extension TestHTTPClient {
    /// Registers through FatFractal's `/ff/register` and returns the session it answers.
    func fatFractalRegister(_ userName: String, password: String = "correct horse") async throws
        -> FatFractalLogin
    {
        let answer = try await send(
            "POST", "/ff/register", headers: fatFractalHeaders,
            body: Array(#"{"userName":"\#(userName)","password":"\#(password)","firstName":"F"}"#.utf8))
        return try FatFractalLogin(answer)
    }

    /// Sends a FatFractal request: the SDK's headers plus `extra`.
    func ff(_ method: String, _ path: String, _ body: String? = nil, _ extra: [(String, String)] = [])
        async throws -> TestResponse
    {
        try await send(method, path, headers: fatFractalHeaders + extra, body: body.map { Array($0.utf8) })
    }
}

extension FatFractalLogin {
    init(_ answer: TestResponse) throws {
        let result = answer.result
        let session = (result["authResult"] as? [String: Any])?["session"] as? [String: Any]
        sessionId = try #require(session?["sessionId"] as? String, "\(answer.status) \(answer.text)")
        userGuid = try #require((result["credential"] as? [String: Any])?["userGuid"] as? String)
        self.answer = answer
    }
}
