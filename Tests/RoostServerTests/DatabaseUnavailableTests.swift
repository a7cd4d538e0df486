import Foundation
import RoostCore
import RoostHTTP
import RoostStore
import Testing

@testable import RoostServer

/// A database that cannot be reached is a 503 the client may retry, not a 500 (issue 15).
@Suite struct DatabaseUnavailableTests {
    @Test func theStoreErrorTranslatesToDatabaseUnavailable() {
        let error = RoostError.translating(.unavailable)
        #expect(error?.status == 503)
        #expect(error?.code == "database_unavailable")
        #expect(error?.details["retryAfter"]?.integerValue == 5)
    }

    @Test func aHandlerThatMeetsAnUnreachableDatabaseAnswers503WithRetryAfter() async throws {
        let boundary = ErrorBoundary(
            logger: Logger(level: .error, sink: { _ in }),
            requestIDs: RequestIDs(trustedProxies: TrustedProxies()))
        var router = Router(errorResponse: boundary.response)
        router.on(.get, "/objects") { _ in throw StoreError.unavailable }
        let response = await router.respond(
            to: Request(
                method: .get, target: "/objects", headers: HTTPHeaders([]), body: [],
                remoteAddress: "192.0.2.1"))
        #expect(response.status == 503)
        #expect(response.headers["Retry-After"] == "5")
        #expect(
            String(decoding: response.body, as: UTF8.self)
                == #"{"status":503,"code":"database_unavailable","message":"The database cannot be reached right now; try again in a few seconds.","details":{"retryAfter":5}}"#
        )
    }
}
