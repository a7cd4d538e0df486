import Foundation
import RoostCore
import RoostServer
import RoostTestSupport
import Testing

/// FatFractal's login, register, sessions and logout over Roost tokens (issue 18).
@Suite("FatFractal sessions") struct FatFractalSessionTests {
    @Test func registerAnswersLoggedInUserSessionAndCookies() async throws {
        let server = try await makeFatFractalServer()
        let login = try await server.client.fatFractalRegister("anna")
        let answer = login.answer
        #expect(answer.status == 201)
        #expect(answer.json["statusMessage"] as? String == "Registered and logged in")
        let user = try #require(answer.result["loggedInUser"] as? [String: Any])
        #expect(user["clazz"] as? String == "FFUser")
        #expect(user["userName"] as? String == "anna")
        #expect(user["guid"] as? String == login.userGuid)
        #expect(user["ffUserCanEdit"] as? Bool == true)
        #expect(
            answer.headerValues("Set-Cookie") == [
                "sessionId=\(login.sessionId); Path=/; SameSite=Lax",
                "userGuid=\(login.userGuid); Path=/; SameSite=Lax",
            ])
        #expect(answer.header("Cache-Control") == "no-store")
        // The session is a Roost token: it works as a bearer token too.
        let session = try await server.client.send(
            "GET", "/ff/session", headers: [("Authorization", "Bearer \(login.sessionId)")])
        #expect(session.json["loggedIn"] as? Bool == true)
    }

    /// FatFractal.js's RegisterRequest sends every field, unset ones as null; the iOS SDK's FFUser
    /// carries its clazz and metadata.
    @Test func registerAcceptsTheSDKsRequestShapes() async throws {
        let server = try await makeFatFractalServer()
        let javascript = try await server.client.ff(
            "POST", "/ff/register",
            #"{"userName":"anna","password":"correct horse","firstName":null,"lastName":null,"email":null}"#)
        #expect(javascript.status == 201, "\(javascript.text)")
        let iOS = try await server.client.ff(
            "POST", "/ff/register",
            #"{"clazz":"FFUser","guid":null,"ffUrl":null,"userName":"bob","password":"correct horse","firstName":"Bob","email":"bob@example.com"}"#
        )
        #expect(iOS.status == 201, "\(iOS.text)")
        #expect((iOS.result["loggedInUser"] as? [String: Any])?["email"] as? String == "bob@example.com")
    }

    @Test func loginAnswersFatFractalShape() async throws {
        let server = try await makeFatFractalServer()
        _ = try await server.client.fatFractalRegister("anna")
        let answer = try await server.client.ff(
            "POST", "/ff/login", #"{"credential":{"userName":"anna","password":"correct horse"}}"#)
        let login = try FatFractalLogin(answer)
        #expect(answer.status == 200)
        #expect(answer.json["statusMessage"] as? String == "Logged in")
        #expect((answer.result["loggedInUser"] as? [String: Any])?["guid"] as? String == login.userGuid)
        #expect(answer.headerValues("Set-Cookie").count == 2)
    }

    @Test func failedLoginIsAnEnvelopedError() async throws {
        let server = try await makeFatFractalServer()
        _ = try await server.client.fatFractalRegister("anna")
        let answer = try await server.client.ff(
            "POST", "/ff/login", #"{"credential":{"userName":"anna","password":"wrong horse"}}"#)
        #expect(answer.status == 401)
        #expect(answer.json["result"] is NSNull)
        #expect(answer.json["code"] as? String == "invalid_credentials")
        #expect(answer.json["statusMessage"] as? String == RoostError.invalidCredentials.message)
        #expect(answer.headerValues("Set-Cookie").isEmpty)
    }

    /// The three ways FatFractal's clients send a session all authenticate a write.
    @Test(arguments: ["simulated cookies", "browser cookie", "iOS Cookie header"])
    func sessionsAuthenticate(way: String) async throws {
        let server = try await makeFatFractalServer()
        let login = try await server.client.fatFractalRegister("anna")
        let headers = way == "simulated cookies" ? login.authHeaders : [login.cookieHeader]
        let created = try await server.client.ff("POST", "/ff/resources/Note", #"{"text":"hi"}"#, headers)
        #expect(created.status == 201, "\(created.text)")
        #expect(created.result["createdBy"] as? String == login.userGuid)
    }

    @Test func cookieWriteWithoutDataTypeIsRefused() async throws {
        let server = try await makeFatFractalServer(definition: #"{"compatibility":"fatfractal"}"#)
        let login = try await server.client.fatFractalRegister("anna")
        let created = try await server.client.send(
            "POST", "/ff/resources/Note",
            headers: [("Content-Type", "application/json"), login.cookieHeader], body: Array(#"{"a":1}"#.utf8)
        )
        #expect(created.status == 403)
        #expect(
            created.text
                == #"{"statusMessage":"A write authenticated by the sessionId cookie must carry the Data-type header that FatFractal's clients send.","result":null,"code":"dialect_header_required"}"#
        )
        // A read with the cookie alone is fine (an <img src> sends no custom header).
        let read = try await server.client.send("GET", "/ff/resources/Note", headers: [login.cookieHeader])
        #expect(read.status == 200)
    }

    @Test func logoutRevokesAndExpiresTheCookies() async throws {
        let server = try await makeFatFractalServer()
        let login = try await server.client.fatFractalRegister("anna")
        let out = try await server.client.ff("POST", "/ff/logout", nil, [login.cookieHeader])
        #expect(out.status == 200)
        #expect(out.text == #"{"statusMessage":"Logged out","result":null}"#)
        #expect(
            out.headerValues("Set-Cookie") == [
                "sessionId=; Path=/; Max-Age=0; SameSite=Lax", "userGuid=; Path=/; Max-Age=0; SameSite=Lax",
            ])
        let again = try await server.client.ff("POST", "/ff/resources/Note", #"{"a":1}"#, login.authHeaders)
        #expect(again.status == 401)
        #expect(again.json["code"] as? String == "invalid_token")
        #expect(again.json["statusMessage"] is String)
        #expect(again.headerValues("Set-Cookie").count == 2)
    }

    @Test func autoRegistrationRegistersUnknownUsersOnly() async throws {
        let server = try await makeFatFractalServer(
            definition: #"{"settings":{"allowAutoRegistration":true}}"#)
        let first = try await server.client.ff(
            "POST", "/ff/login", #"{"credential":{"userName":"newbie","password":"correct horse"}}"#)
        #expect(first.status == 201, "\(first.text)")
        #expect((first.result["loggedInUser"] as? [String: Any])?["userName"] as? String == "newbie")
        let wrong = try await server.client.ff(
            "POST", "/ff/login", #"{"credential":{"userName":"newbie","password":"wrong horse"}}"#)
        #expect(wrong.status == 401)
        #expect(wrong.json["code"] as? String == "invalid_credentials")
    }

    @Test func withoutAutoRegistrationUnknownUsersAreRefused() async throws {
        let server = try await makeFatFractalServer()
        let answer = try await server.client.ff(
            "POST", "/ff/login", #"{"credential":{"userName":"nobody","password":"correct horse"}}"#)
        #expect(answer.status == 401)
    }

    /// Over HTTPS the session cookies are `Secure`, so a browser never sends them in clear.
    @Test func cookiesAreSecureOverTLS() async throws {
        let authority = try await TestCertificateAuthority()
        let pair = try await authority.issue("server")
        let server = try await TestServer { configuration in
            configuration.tlsCertificatePath = pair.certificate
            configuration.tlsKeyPath = pair.key
            configuration.passwordHasher = PasswordHasher.cheapForTests()
        }
        defer { Task { await server.stop() } }
        let curl = try await runProgram(
            "/usr/bin/curl",
            [
                "-sS", "-i", "--cacert", authority.certificate, "-H", "Data-type: application/json", "-H",
                "Content-type: application/json", "--data",
                #"{"userName":"anna","password":"correct horse"}"#,
                "https://localhost:\(server.port)/ff/register",
            ])
        #expect(curl.status == 0, "\(curl.errorOutput)")
        #expect(curl.output.hasPrefix("HTTP/1.1 201 Created\r\n"))
        let cookies = curl.output.split(separator: "\r\n").filter { $0.hasPrefix("Set-Cookie: ") }
        #expect(cookies.count == 2)
        #expect(cookies.allSatisfy { $0.hasSuffix("; Path=/; SameSite=Lax; Secure") })
    }

    /// A session id is a token secret: no log line carries it, at any level.
    @Test func sessionIdsStayOutOfLogs() async throws {
        let log = LogCapture()
        let server = try await TestServer { configuration in
            configuration.passwordHasher = PasswordHasher.cheapForTests()
            configuration.accessLog = true
            configuration.accessLogSink = { log.append($0) }
            configuration.logSink = { log.append($0) }
            configuration.logLevel = .debug
        }
        let login = try await server.client.fatFractalRegister("anna")
        _ = try await server.client.ff("POST", "/ff/resources/Note", #"{"a":1}"#, login.authHeaders)
        _ = try await server.client.ff("GET", "/ff/resources/Note", nil, [login.cookieHeader])
        _ = try await server.client.ff("POST", "/ff/logout", nil, [login.cookieHeader])
        let refused = try await server.client.ff("POST", "/ff/resources/Note", #"{"a":1}"#, login.authHeaders)
        #expect(refused.status == 401)
        await server.stop()
        #expect(log.text.contains("/ff/logout"))
        #expect(!log.text.contains(login.sessionId))
    }

    /// Roost's own API is unchanged when the dialect is off: same answers, no cookies read or set.
    @Test func nativeAccountsAreUntouched() async throws {
        let server = try await makeFatFractalServer()
        let registered = try await server.client.register("anna")
        #expect(registered.status == 201)
        #expect(registered.json["token"] is String)
        #expect(registered.json["statusMessage"] == nil)
        #expect(registered.headerValues("Set-Cookie").isEmpty)
        let token = try #require(registered.json["token"] as? String)
        let guid = try #require((registered.json["user"] as? [String: Any])?["guid"] as? String)
        let cookieOnly = try await server.client.send(
            "GET", "/ff/session", headers: [("Cookie", "sessionId=\(token); userGuid=\(guid)")])
        #expect(cookieOnly.text == #"{"loggedIn":false}"#)
    }
}
