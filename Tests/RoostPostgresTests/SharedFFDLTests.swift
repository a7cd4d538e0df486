import Foundation
import RoostCore
import RoostServer
import RoostTestSupport
import Testing

/// `executeFFDL` on one instance changes the app for every instance on the database (issue 32).
@Suite("executeFFDL on a shared database")
struct SharedFFDLTests {
    static let password = "a long system password 1"

    @Test func aChangeOnOneInstanceReachesTheOther() async throws {
        let definition = try AppDefinition.parse(
            Array(#"{"collections": {"Bar": {}}, "settings": {"allowNewCollections": true}}"#.utf8))
        let (a, b, _) = try await SharedDatabaseTests.pair { configuration in
            configuration.appDefinition = definition
            configuration.systemPassword = Self.password
        }
        let basic = ("Authorization", "Basic " + Data("system:\(Self.password)".utf8).base64EncodedString())
        let answer = try await a.client.send(
            "POST", "/ff/metadata",
            json: #"{"ffdl":"CREATE COLLECTION /Foos\nDROP COLLECTION /Bar\nSET AllowNewCollections false"}"#,
            headers: [basic])
        #expect(answer.status == 200, "\(answer.text)")
        for server in [a, b] {
            let arrived = await eventually(within: 10) {
                let current = server.application.definitions.definition
                return current.collections["Foos"] != nil && current.collections["Bar"] == nil
                    && !current.settings.allowNewCollections
            }
            #expect(arrived, "the instance on port \(server.port) has the change")
        }
        let names =
            (try await b.client.send("GET", "/ff/metadata").json["collectionResources"]
            as? [[String: Any]])?.compactMap { $0["collectionName"] as? String }
        #expect(names == ["/FFUser", "/FFUserGroup", "/Foos"])
        for server in [a, b] { await server.stop() }
    }
}
