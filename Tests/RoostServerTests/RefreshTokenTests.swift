import Foundation
import RoostCore
import RoostServer
import RoostTestSupport
import Testing

/// A server whose logins may ask for refresh tokens (`optional` unless said), with a manual clock.
func makeRefreshServer(
    clock: ManualWallClock = ManualWallClock(), mode: RefreshMode = .optional, definition: String? = nil,
    log: LogCapture? = nil
) async throws -> TestServer {
    let parsed = try definition.map { try AppDefinition.parse(Array($0.utf8)) }
    return try await TestServer { configuration in
        configuration.clock = clock
        configuration.passwordHasher = PasswordHasher.cheapForTests()
        configuration.refreshMode = mode
        if let parsed { configuration.appDefinition = parsed }
        if let log {
            configuration.accessLog = true
            configuration.accessLogSink = { log.append($0) }
            configuration.logSink = { log.append($0) }
        }
    }
}

/// An access token and refresh token, as a login or an exchange answered them.
struct TokenPair {
    let token: String
    let refreshToken: String
    let tokenId: String
    let json: [String: Any]

    init(_ response: TestResponse) throws {
        guard response.status == 200 || response.status == 201, let token = response.json["token"] as? String,
            let refresh = response.json["refreshToken"] as? String,
            let id = response.json["tokenId"] as? String
        else { throw TestClientError(description: "no token pair: \(response.status) \(response.text)") }
        self.token = token
        refreshToken = refresh
        tokenId = id
        json = response.json
    }
}

extension TestHTTPClient {
    func loginForRefresh(_ userName: String, device: String = "phone") async throws -> TokenPair {
        try TokenPair(
            await send(
                "POST", "/ff/login",
                json:
                    #"{"userName":"\#(userName)","password":"correct horse","deviceId":"\#(device)","refresh":true}"#
            ))
    }

    func refresh(_ refreshToken: String) async throws -> TestResponse {
        try await send("POST", "/ff/refresh", json: #"{"refreshToken":"\#(refreshToken)"}"#)
    }

    /// The status and code of a request that needs a login, made with `token`.
    func tokensStatus(_ token: String) async throws -> (Int, String?) {
        let response = try await send("GET", "/ff/tokens", headers: [("Authorization", "Bearer \(token)")])
        return (response.status, response.json["code"] as? String)
    }
}

let invalidRefreshBody =
    #"{"status":401,"code":"invalid_refresh_token","message":"The refresh token is unknown, expired, revoked or already used; log in again.","details":{}}"#
let tokenExpiredBody =
    #"{"status":401,"code":"token_expired","message":"The access token has expired; exchange the refresh token at POST /ff/refresh for a new one.","details":{}}"#

@Suite("Refresh tokens: rotation, reuse detection, expiry")
struct RefreshTokenTests {
    @Test(
        "a login that asks gets a 15-minute access token and a 30-day refresh token; one that does not, a plain token"
    )
    func loginIssuesAPair() async throws {
        let clock = ManualWallClock()
        let server = try await makeRefreshServer(clock: clock)
        let now = clock.nowMilliseconds()
        let registered = try await server.client.register("alice", extra: #","refresh":true"#)
        #expect(registered.status == 201)
        #expect(registered.json["user"].flatMap { ($0 as? [String: Any])?["refresh"] } == nil)
        let pair = try await server.client.loginForRefresh("alice")
        #expect(pair.json["expiresAt"] as? Int64 == now + 900_000)
        #expect(pair.json["expiresIn"] as? Int == 900)
        #expect(pair.json["refreshExpiresAt"] as? Int64 == now + 30 * 86_400_000)
        #expect(pair.token.count == 43 && pair.refreshToken.count == 43 && pair.token != pair.refreshToken)
        #expect(try await server.client.tokensStatus(pair.token).0 == 200)
        let plain = try await server.client.send(
            "POST", "/ff/login", json: #"{"userName":"alice","password":"correct horse","deviceId":"laptop"}"#
        )
        #expect(plain.status == 200)
        #expect(plain.json["refreshToken"] == nil && plain.json["expiresIn"] == nil)
        #expect(plain.json["expiresAt"] as? Int64 == now + 30 * 86_400_000)
        // Seed 003's token resource too.
        let resource = try await server.client.send(
            "POST", "/ff/tokens", json: #"{"userName":"alice","password":"correct horse","refresh":true}"#)
        #expect(resource.status == 201)
        #expect((resource.json["refreshToken"] as? String)?.count == 43)
        #expect(resource.json["refreshExpiresAt"] as? Int64 == now + 30 * 86_400_000)
        await server.stop()
    }

    @Test("with refresh tokens off, a login that asks gets a plain token")
    func offIgnoresTheAsk() async throws {
        let server = try await makeRefreshServer(mode: .off)
        #expect(try await server.client.register("bob").status == 201)
        let response = try await server.client.send(
            "POST", "/ff/login", json: #"{"userName":"bob","password":"correct horse","refresh":true}"#)
        #expect(response.status == 200)
        #expect(response.json["refreshToken"] == nil)
        #expect(try await server.client.refresh("anything").text == invalidRefreshBody)
        await server.stop()
    }

    @Test("an exchange answers a new pair for the same session; the old access and refresh tokens die")
    func rotation() async throws {
        let clock = ManualWallClock()
        let server = try await makeRefreshServer(clock: clock)
        #expect(try await server.client.register("carol").status == 201)
        let first = try await server.client.loginForRefresh("carol")
        clock.advance(seconds: 600)
        let answer = try await server.client.refresh(first.refreshToken)
        #expect(answer.status == 200)
        #expect(answer.header("Cache-Control") == "no-store")
        let second = try TokenPair(answer)
        #expect(second.tokenId == first.tokenId)
        #expect(second.token != first.token && second.refreshToken != first.refreshToken)
        #expect(second.json["expiresAt"] as? Int64 == clock.nowMilliseconds() + 900_000)
        #expect(second.json["refreshExpiresAt"] as? Int64 == clock.nowMilliseconds() + 30 * 86_400_000)
        #expect(second.json["userGuid"] as? String != nil)
        #expect(
            Set(second.json.keys) == [
                "token", "tokenId", "userGuid", "expiresAt", "expiresIn", "refreshToken", "refreshExpiresAt",
            ])
        #expect(try await server.client.tokensStatus(second.token).0 == 200)
        #expect(try await server.client.tokensStatus(first.token) == (401, "invalid_token"))
        // The next exchange goes on from the new refresh token.
        let third = try TokenPair(await server.client.refresh(second.refreshToken))
        #expect(try await server.client.tokensStatus(third.token).0 == 200)
        await server.stop()
    }

    @Test(
        "a refresh token used twice ends its session: the thief's and the owner's next exchanges fail, and the access token with them"
    )
    func reuseRevokesTheFamily() async throws {
        let server = try await makeRefreshServer()
        #expect(try await server.client.register("dave").status == 201)
        let stolen = try await server.client.loginForRefresh("dave")
        let other = try await server.client.loginForRefresh("dave", device: "tablet")
        // The thief exchanges the copy first.
        let thief = try TokenPair(await server.client.refresh(stolen.refreshToken))
        // The owner presents the same, now dead, token: the whole family ends.
        let owner = try await server.client.refresh(stolen.refreshToken)
        #expect(owner.status == 401)
        #expect(owner.text == invalidRefreshBody)
        #expect(owner.header("WWW-Authenticate") == #"Bearer realm="roost", error="invalid_token""#)
        #expect(try await server.client.refresh(thief.refreshToken).text == invalidRefreshBody)
        #expect(try await server.client.tokensStatus(thief.token) == (401, "invalid_token"))
        #expect(try await server.client.tokensStatus(stolen.token) == (401, "invalid_token"))
        // Another device's session is another family.
        #expect(try await server.client.tokensStatus(other.token).0 == 200)
        #expect(try await server.client.refresh(other.refreshToken).status == 200)
        await server.stop()
    }

    @Test(
        "an expired access token answers 401 token_expired; the exchange still works and the session stays listed"
    )
    func accessTokenExpiry() async throws {
        let clock = ManualWallClock()
        let server = try await makeRefreshServer(clock: clock)
        #expect(try await server.client.register("erin").status == 201)
        let pair = try await server.client.loginForRefresh("erin")
        clock.advance(seconds: 899)
        #expect(try await server.client.tokensStatus(pair.token).0 == 200)
        clock.advance(seconds: 1)
        let expired = try await server.client.send(
            "GET", "/ff/tokens", headers: [("Authorization", "Bearer \(pair.token)")])
        #expect(expired.status == 401)
        #expect(expired.text == tokenExpiredBody)
        #expect(
            expired.header("WWW-Authenticate")
                == #"Bearer realm="roost", error="invalid_token", error_description="The access token expired""#
        )
        // Use never extends an access token: an hour of requests later it is still expired.
        clock.advance(seconds: 3600)
        #expect(try await server.client.tokensStatus(pair.token) == (401, "token_expired"))
        let renewed = try TokenPair(await server.client.refresh(pair.refreshToken))
        let listed = try await server.client.send(
            "GET", "/ff/tokens/\(renewed.tokenId)", headers: [("X-Token", renewed.token)])
        #expect(listed.status == 200)
        #expect(listed.json["refreshExpiresAt"] as? Int64 == clock.nowMilliseconds() + 30 * 86_400_000)
        #expect(listed.json["current"] as? Bool == true)
        await server.stop()
    }

    @Test("an expired refresh token is refused and its session ends")
    func refreshTokenExpiry() async throws {
        let clock = ManualWallClock()
        let server = try await makeRefreshServer(clock: clock)
        #expect(try await server.client.register("fay").status == 201)
        let pair = try await server.client.loginForRefresh("fay")
        let other = try await server.client.loginForRefresh("fay", device: "tablet")
        clock.advance(seconds: 30 * 86_400 - 1)
        let kept = try TokenPair(await server.client.refresh(other.refreshToken))
        clock.advance(seconds: 1)
        #expect(try await server.client.refresh(pair.refreshToken).text == invalidRefreshBody)
        let sessions = try await server.client.send("GET", "/ff/tokens", headers: [("X-Token", kept.token)])
        #expect((sessions.json["items"] as? [[String: Any]])?.map { $0["deviceId"] as? String } == ["tablet"])
        await server.stop()
    }

    @Test("logout ends the family, by access token or (once it expired) by refresh token")
    func logoutEndsTheFamily() async throws {
        let clock = ManualWallClock()
        let server = try await makeRefreshServer(clock: clock)
        #expect(try await server.client.register("gus").status == 201)
        let pair = try await server.client.loginForRefresh("gus")
        let out = try await server.client.send(
            "POST", "/ff/logout", headers: [("Authorization", "Bearer \(pair.token)")])
        #expect(out.text == #"{"loggedOut":true}"#)
        #expect(try await server.client.refresh(pair.refreshToken).text == invalidRefreshBody)

        let later = try await server.client.loginForRefresh("gus")
        clock.advance(seconds: 901)
        let byRefresh = try await server.client.send(
            "POST", "/ff/logout", json: #"{"refreshToken":"\#(later.refreshToken)"}"#,
            headers: [("Authorization", "Bearer \(later.token)")])
        #expect(byRefresh.text == #"{"loggedOut":true}"#)
        #expect(try await server.client.refresh(later.refreshToken).text == invalidRefreshBody)
        let again = try await server.client.send(
            "POST", "/ff/logout", json: #"{"refreshToken":"\#(later.refreshToken)"}"#)
        #expect(again.text == #"{"loggedOut":false}"#)
        await server.stop()
    }

    @Test("revoking the session, a new login on the device and a password change end families")
    func revocationsEndFamilies() async throws {
        let server = try await makeRefreshServer()
        #expect(try await server.client.register("hal").status == 201)
        let phone = try await server.client.loginForRefresh("hal", device: "phone")
        let tablet = try await server.client.loginForRefresh("hal", device: "tablet")
        let watch = try await server.client.loginForRefresh("hal", device: "watch")
        // DELETE /ff/tokens/{id}.
        let deleted = try await server.client.send(
            "DELETE", "/ff/tokens/\(watch.tokenId)", headers: [("X-Token", phone.token)])
        #expect(deleted.status == 204)
        #expect(try await server.client.refresh(watch.refreshToken).text == invalidRefreshBody)
        // perDevice: a new login on the tablet replaces its session.
        let newTablet = try await server.client.loginForRefresh("hal", device: "tablet")
        #expect(try await server.client.refresh(tablet.refreshToken).text == invalidRefreshBody)
        // A password change ends every other session, and keeps the one that made it.
        let changed = try await server.client.send(
            "POST", "/ff/password",
            json: #"{"currentPassword":"correct horse","newPassword":"battery staple"}"#,
            headers: [("X-Token", phone.token)])
        #expect(changed.status == 200)
        #expect(try await server.client.refresh(newTablet.refreshToken).text == invalidRefreshBody)
        #expect(try await server.client.refresh(phone.refreshToken).status == 200)
        await server.stop()
    }

    @Test("concurrent exchanges of one refresh token: exactly one answers a pair")
    func concurrentExchanges() async throws {
        let server = try await makeRefreshServer()
        #expect(try await server.client.register("ivy").status == 201)
        let pair = try await server.client.loginForRefresh("ivy")
        let presented = pair.refreshToken
        let client = server.liveClient
        let answers = try await withThrowingTaskGroup(of: TestResponse.self) { group in
            for _ in 0..<8 { group.addTask { try await client.refresh(presented) } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        let winners = answers.filter { $0.status == 200 }
        #expect(winners.count == 1)
        #expect(answers.filter { $0.status == 401 && $0.text == invalidRefreshBody }.count == 7)
        // The losers presented a dead token: the family ended, the winner's pair with it (a
        // client must exchange a token once; the SDK does).
        let winner = try TokenPair(try #require(winners.first))
        #expect(try await server.client.refresh(winner.refreshToken).text == invalidRefreshBody)
        #expect(try await server.client.tokensStatus(winner.token) == (401, "invalid_token"))
        await server.stop()
    }

    static let badExchanges: [APIScenario] = [
        APIScenario(
            name: "no refreshToken", method: "POST", path: "/ff/refresh", body: #"{}"#,
            status: 400,
            exactBody:
                #"{"status":400,"code":"missing_field","message":"'refreshToken' is required.","details":{"field":"refreshToken"}}"#
        ),
        APIScenario(
            name: "a number", method: "POST", path: "/ff/refresh", body: #"{"refreshToken":5}"#, status: 400,
            exactBody:
                #"{"status":400,"code":"invalid_field","message":"refreshToken must be a string.","details":{"field":"refreshToken"}}"#
        ),
        APIScenario(
            name: "not JSON", method: "POST", path: "/ff/refresh", body: #"{"refreshToken""#, status: 400,
            code: "invalid_json"),
        APIScenario(
            name: "unknown", method: "POST", path: "/ff/refresh", body: #"{"refreshToken":"nope"}"#,
            status: 401,
            exactBody: invalidRefreshBody),
        APIScenario(
            name: "empty", method: "POST", path: "/ff/refresh", body: #"{"refreshToken":""}"#, status: 401,
            exactBody: invalidRefreshBody),
        APIScenario(
            name: "longer than 256 bytes", method: "POST", path: "/ff/refresh",
            body: #"{"refreshToken":"\#(String(repeating: "a", count: 257))"}"#, status: 401,
            exactBody: invalidRefreshBody),
    ]

    @Test("bad exchanges", arguments: badExchanges)
    func badExchange(_ scenario: APIScenario) async throws {
        let server = try await makeRefreshServer()
        _ = try await scenario.run(against: server)
        await server.stop()
    }

    @Test("a body over the account limit is refused at its head")
    func largeBody() async throws {
        let server = try await makeRefreshServer()
        let response = try await server.client.refresh(String(repeating: "a", count: 200_000))
        #expect(response.status == 413)
        #expect(response.json["code"] as? String == "body_too_large")
        await server.stop()
    }

    @Test("the app definition's settings: always refresh, a one-minute access token; bad values refused")
    func appDefinitionSettings() async throws {
        let clock = ManualWallClock()
        let server = try await makeRefreshServer(
            clock: clock, mode: .off,
            definition:
                #"{"settings":{"refreshTokens":"always","accessTokenLifetime":60,"tokenLifetime":3600}}"#)
        let registered = try await server.client.register("jay")
        #expect(registered.json["expiresIn"] as? Int == 60)
        #expect(registered.json["refreshExpiresAt"] as? Int64 == clock.nowMilliseconds() + 3_600_000)
        let pair = try TokenPair(registered)
        clock.advance(seconds: 60)
        #expect(try await server.client.tokensStatus(pair.token) == (401, "token_expired"))
        #expect(try await server.client.refresh(pair.refreshToken).status == 200)
        await server.stop()
        for (text, message) in [
            (#"{"settings":{"refreshTokens":"sometimes"}}"#, "'off', 'optional' or 'always'"),
            (#"{"settings":{"accessTokenLifetime":59}}"#, "seconds, from 60 to 86400 (a day)"),
        ] {
            #expect(throws: AppDefinitionError.self) { try AppDefinition.parse(Array(text.utf8)) }
            do {
                _ = try AppDefinition.parse(Array(text.utf8))
            } catch {
                #expect(String(describing: error).contains(message))
            }
        }
    }

    @Test("neither log shows a refresh token")
    func neverLogged() async throws {
        let log = LogCapture()
        let server = try await makeRefreshServer(log: log)
        #expect(try await server.client.register("kim").status == 201)
        let pair = try await server.client.loginForRefresh("kim")
        let next = try TokenPair(await server.client.refresh(pair.refreshToken))
        _ = try await server.client.refresh(pair.refreshToken)
        await server.stop()
        #expect(log.text.contains("/ff/refresh"))
        for secret in [pair.refreshToken, next.refreshToken, pair.token, next.token] {
            #expect(!log.text.contains(secret))
        }
    }
}
