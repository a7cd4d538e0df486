import Foundation
import RoostCore
import RoostHTTP
import RoostSQLite
import RoostStore
import RoostTestSupport
import Synchronization
import Testing

@testable import RoostServer

/// `--log-level`, `--log-format`, request ids in `X-Request-Id` and on every log line, and errors
/// logged once without secrets.
@Suite struct LoggingTests {
    private struct Boom: Error, CustomStringConvertible {
        var description: String { "the disk controller caught fire" }
    }

    private func lines(_ capture: LogCapture) -> [Substring] {
        capture.text.split(separator: "\n")
    }

    private func jsonLines(_ capture: LogCapture) throws -> [[String: Any]] {
        try lines(capture).map {
            try #require(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any], "\($0)")
        }
    }

    // MARK: - Request ids

    @Test func everyAnswerCarriesItsOwnRequestId() async throws {
        let server = try await TestServer()
        defer { Task { await server.stop() } }
        var ids: Set<String> = []
        for path in ["/health", "/ff/resources/Nothing/abc", "/nowhere"] {
            let response = try await server.client.send("GET", path)
            let id = try #require(response.header("X-Request-Id"), "\(path)")
            #expect(id.utf8.count == 15 && id.allSatisfy { $0.isLowercase || $0.isNumber }, "\(id)")
            ids.insert(id)
        }
        #expect(ids.count == 3)
    }

    @Test func protocolErrorsCarryARequestIdToo() async throws {
        let server = try await TestServer()
        defer { Task { await server.stop() } }
        let connection = try RawConnection(port: server.port)
        connection.send(
            "GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n")
        let response = try connection.readResponse()
        #expect(response.status == 400)
        #expect(response.header("X-Request-Id")?.utf8.count == 15)
    }

    @Test func aTrustedProxysRequestIdIsKeptWhenShortAndPrintable() async throws {
        let log = LogCapture()
        let server = try await TestServer { configuration in
            configuration.trustedProxies = try! TrustedProxies("127.0.0.1")
            configuration.accessLog = true
            configuration.accessLogSink = { log.append($0) }
        }
        defer { Task { await server.stop() } }
        let kept = try await server.client.send("GET", "/health", headers: [("X-Request-Id", "edge-4f2a:17")])
        #expect(kept.header("X-Request-Id") == "edge-4f2a:17")
        #expect(await eventually { log.text.contains(" 127.0.0.1 edge-4f2a:17 GET /health 200 ") })
        for bad in [String(repeating: "a", count: 129), "has space", "caf\u{e9}"] {
            let replaced = try await server.client.send("GET", "/health", headers: [("X-Request-Id", bad)])
            #expect(replaced.header("X-Request-Id")?.utf8.count == 15, "\(bad)")
        }
    }

    @Test func anUntrustedPeersRequestIdIsReplaced() async throws {
        let server = try await TestServer { $0.trustedProxies = try! TrustedProxies("10.0.0.0/8") }
        defer { Task { await server.stop() } }
        let response = try await server.client.send(
            "GET", "/health", headers: [("X-Request-Id", "forged-id")])
        #expect(response.header("X-Request-Id") != "forged-id")
        #expect(response.header("X-Request-Id")?.utf8.count == 15)
    }

    @Test func theAccessLogLineCarriesTheRequestId() async throws {
        let log = LogCapture()
        let server = try await TestServer { configuration in
            configuration.accessLog = true
            configuration.accessLogSink = { log.append($0) }
        }
        defer { Task { await server.stop() } }
        let response = try await server.client.send("GET", "/health?token=secret")
        let id = try #require(response.header("X-Request-Id"))
        #expect(await eventually { log.text.contains(" 127.0.0.1 \(id) GET /health?token=REDACTED 200 ") })
    }

    // MARK: - Errors, once, with the id, without secrets

    @Test func anInternalErrorIsLoggedOnceWithItsRequestIdAndNoSecrets() async throws {
        let log = LogCapture()
        let logger = Logger(level: .info, sink: { log.append($0) })
        let ids = RequestIDs(trustedProxies: TrustedProxies())
        let boundary = ErrorBoundary(logger: logger, requestIDs: ids)
        let storage = try SQLiteStorage(directory: TestServer.makeTemporaryDirectory(), collections: .builtIn)
        let writes = IdempotentWrites(service: IdempotencyService(store: storage.idempotencyKeys))
        var router = Router(errorResponse: boundary.response)
        // Through IdempotentWrites too, which renders errors itself: still one line.
        router.on(.post, "/boom/:secret") { request in
            try await writes.respond(to: request, principal: nil) { _, _, _ in throw Boom() }
        }
        let front = MiddlewareChain(
            [
                RequestIDMiddleware(requestIDs: ids),
                CORSMiddleware(policy: CORSPolicy(configuredOrigins: [], definitions: AppDefinitionSource())),
            ], around: router)
        let request = Request(
            method: .post, target: "/boom/hunter2?password=hunter3",
            headers: HTTPHeaders([("X-Token", "tok-SECRET"), ("Idempotency-Key", "k1")]),
            body: Array(#"{"password":"hunter4"}"#.utf8), remoteAddress: "192.0.2.1")
        let response = await front.respond(to: request)
        await storage.database.closeReaders()
        #expect(response.status == 500)
        #expect(String(decoding: response.body, as: UTF8.self).contains("internal"))
        let id = try #require(response.headers["X-Request-Id"])
        let logged = lines(log)
        #expect(logged.count == 1, "\(logged)")
        #expect(
            logged.first?.contains(" error \(id) POST /boom/:secret failed: the disk controller caught fire")
                == true)
        for secret in ["hunter2", "hunter3", "hunter4", "tok-SECRET"] { #expect(!log.text.contains(secret)) }
    }

    // MARK: - Levels and formats

    @Test func levelsFilterLines() {
        let log = LogCapture()
        let logger = Logger(level: .warn, sink: { log.append($0) })
        logger.debug("d")
        logger.info("i")
        logger.warn("w")
        logger.error("e")
        #expect(
            lines(log).map { $0.split(separator: " ").dropFirst().joined(separator: " ") } == [
                "warn - w", "error - e",
            ])
        #expect(Logger.Level(name: "debug") == .debug)
        #expect(Logger.Level(name: "verbose") == nil)
    }

    @Test func textLinesCannotBeForgedThroughAMessage() {
        let log = LogCapture()
        Logger(sink: { log.append($0) }).error(
            "one\ntwo\u{1b}[31m", requestID: "r1", fields: [("key", "a b\r")])
        #expect(lines(log).count == 1)
        #expect(log.text.hasSuffix(#" error r1 one\ntwo\x1b[31m key=a b\r"# + "\n"))
    }

    @Test func debugLogsRefusalsWithTheirRequestId() async throws {
        let log = LogCapture()
        let server = try await TestServer { configuration in
            configuration.logLevel = .debug
            configuration.logSink = { log.append($0) }
        }
        defer { Task { await server.stop() } }
        let response = try await server.client.send(
            "GET", "/ff/tokens", headers: [("Authorization", "Basic x")])
        let id = try #require(response.header("X-Request-Id"))
        #expect(
            await eventually {
                log.text.contains(" debug \(id) GET /ff/tokens refused status=401 code=invalid_token")
            }, "\(log.text)")
        #expect(!log.text.contains("Basic x"))
    }

    @Test func infoDoesNotLogRefusals() async throws {
        let log = LogCapture()
        let server = try await TestServer { $0.logSink = { log.append($0) } }
        defer { Task { await server.stop() } }
        #expect(try await server.client.send("GET", "/nowhere").status == 404)
        #expect(log.text.isEmpty)
    }

    @Test func jsonLinesAreObjectsWithTimeLevelRequestIdMessageAndFields() async throws {
        let log = LogCapture()
        let access = LogCapture()
        let server = try await TestServer { configuration in
            configuration.logLevel = .debug
            configuration.logFormat = .json
            configuration.logSink = { log.append($0) }
            configuration.accessLog = true
            configuration.accessLogSink = { access.append($0) }
        }
        defer { Task { await server.stop() } }
        let response = try await server.client.send("GET", "/nowhere")
        let id = try #require(response.header("X-Request-Id"))
        #expect(await eventually { !log.text.isEmpty && !access.text.isEmpty })
        let line = try #require(try jsonLines(log).first)
        #expect(Set(line.keys) == ["time", "level", "requestId", "message", "fields"])
        #expect(line["level"] as? String == "debug")
        #expect(line["requestId"] as? String == id)
        #expect(line["message"] as? String == "GET - refused")  // no route: the path may hold user data
        #expect(line["fields"] as? [String: String] == ["status": "404", "code": "not_found"])
        #expect((line["time"] as? String)?.hasSuffix("Z") == true)
        let request = try #require(try jsonLines(access).first)
        #expect(request["level"] as? String == "info")
        #expect(request["requestId"] as? String == id)
        #expect(request["message"] as? String == "request")
        let fields = try #require(request["fields"] as? [String: Any])
        #expect(fields["client"] as? String == "127.0.0.1")
        #expect(fields["method"] as? String == "GET")
        #expect(fields["target"] as? String == "/nowhere")
        #expect(fields["status"] as? Int == 404)
    }

    @Test("with --log-format json, the binary's own lines on standard output are JSON objects too")
    func theServersLifecycleLinesAreJSON() async throws {
        let directory = TestServer.makeTemporaryDirectory()
        if TestBackend.current == .postgres { _ = try await TestBackend.databaseURL(for: directory) }
        let server = try RoostProcess(dataDirectory: directory, arguments: ["--log-format", "json"])
        let line = try #require(
            JSONSerialization.jsonObject(with: Data(server.firstLine.utf8)) as? [String: Any],
            "\(server.firstLine)")
        #expect(line["level"] as? String == "info")
        #expect(line["requestId"] is NSNull)
        let url = "http://127.0.0.1:\(server.port)"
        #expect(
            line["message"] as? String
                == "roost \(RoostRelease.version) listening on \(url) (data: \(directory))")
        let fields = try #require(line["fields"] as? [String: String])
        #expect(
            fields == [
                "event": "listening", "url": url, "version": RoostRelease.version, "dataDirectory": directory,
            ])
        #expect(try await server.stop(signal: SIGTERM) == 0)
    }

    @Test func aLineWithoutARequestHasANullId() throws {
        let log = LogCapture()
        Logger(format: .json, sink: { log.append($0) }).warn("disk \"full\"")
        let line = try #require(try jsonLines(log).first)
        #expect(line["requestId"] is NSNull)
        #expect(line["message"] as? String == "disk \"full\"")
    }

    @Test(arguments: [
        (["--log-level", "verbose"], "--log-level takes error, warn, info or debug, not 'verbose'"),
        (["--log-format", "xml"], "--log-format takes 'text' or 'json', not 'xml'"),
    ])
    func theFlagsRefuseUnknownValues(arguments: [String], message: String) async throws {
        let result = try await runRoost(["serve", "--port", "0"] + arguments)
        #expect(result.status == 64)
        #expect(result.errorOutput.contains(message))
    }
}
