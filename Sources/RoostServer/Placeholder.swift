import RoostHTTP
import Foundation

public func demo() async throws {
    var router = Router { error, _ in Response(status: 500, body: Array("\(error)".utf8)) }
    router.on(.get, "/hello/:name") { req in Response(status: 200, body: Array("hi \(req.parameters["name"]!)".utf8)) }
    let server = HTTPServer(configuration: .init(port: 18080, readTimeout: 3, idleTimeout: 5, accessLog: AccessLog()), responder: router)
    try server.start()
    try await Task.sleep(nanoseconds: 600_000_000_000)
}
