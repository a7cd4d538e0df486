import Foundation
import RoostClient
import Testing

/// Errors read well to app developers and users, and name the object that does not decode.
@Suite struct ErrorTextTests {
    @Test func errorsAreLocalizedWithSuggestions() async throws {
        let transport = ScriptedTransport([
            .success(
                TransportResponse(
                    status: 401,
                    body: Data(
                        #"{"status":401,"code":"login_required","message":"Send 'Authorization: Bearer <token>'.","details":{}}"#
                            .utf8)))
        ])
        let client = try makeUnitClient(transport)
        do {
            _ = try await client.fetch(Note.self, guid: "g1", cachePolicy: .networkOnly)
            Issue.record("no error")
        } catch {
            // Through `any Error`, as an app's catch sees it.
            #expect(
                error.localizedDescription
                    == "You need to be logged in to do this. Call login(userName:password:) (or register) first."
            )
            let roost = try #require(error as? RoostClient.RoostError)
            #expect(roost.code == "login_required")
            #expect(roost.recoverySuggestion == "Log in (again) and retry.")
            #expect(roost.details["serverMessage"] == "Send 'Authorization: Bearer <token>'.")
        }
        let unreachable = RoostError(
            status: nil, code: "network_unreachable", message: "The server cannot be reached.")
        #expect((unreachable as any Error).localizedDescription == "The server cannot be reached.")
        #expect(unreachable.recoverySuggestion?.contains("network") == true)
    }

    static let page =
        #"{"items":[\#(objectJSON("a", #""text":"fine""#)),\#(objectJSON("b", #""count":2"#)),\#(objectJSON("c", #""text":7"#))],"total":3}"#

    @Test func anUndecodableObjectIsNamedByCollectionGuidAndField() async throws {
        let client = try makeUnitClient(ScriptedTransport([ScriptedTransport.json(200, Self.page)]))
        do {
            _ = try await client.query(Note.self).page(cachePolicy: .networkOnly)
            Issue.record("a page with a bad object decoded")
        } catch let error as RoostError {
            #expect(error.code == "decoding_failed")
            #expect(
                error.message
                    == "Note object b does not fit the app's model: missing field 'text'. Make the field optional in the model, or fix the stored object."
            )
            #expect(error.details["collection"] == "Note")
            #expect(error.details["guid"] == "b")
            #expect(error.details["field"] == "text")
        }
    }

    @Test func undecodableObjectsCanBeSkippedAndReported() async throws {
        let client = try makeUnitClient(ScriptedTransport([ScriptedTransport.json(200, Self.page)]))
        let page = try await client.query(Note.self).skippingUndecodable().fetchPage(
            total: true, cachePolicy: .networkOnly)
        #expect(page.items.map(\.guid) == ["a"])
        #expect(page.total == 3)
        #expect(
            page.skipped == [
                UndecodableObject(
                    collection: "Note", guid: "b", field: "text", reason: "missing field 'text'"),
                UndecodableObject(
                    collection: "Note", guid: "c", field: "text", reason: "'text' is not String"),
            ])
    }

    @Test func aSingleObjectIsNamedToo() async throws {
        let client = try makeUnitClient(
            ScriptedTransport([ScriptedTransport.json(200, objectJSON("b", #""text":"t","count":"many""#))]))
        do {
            _ = try await client.fetch(Note.self, guid: "b", cachePolicy: .networkOnly)
            Issue.record("decoded")
        } catch let error as RoostError {
            #expect(error.details["guid"] == "b")
            #expect(error.details["field"] == "count")
            #expect(error.message.hasPrefix("Note object b does not fit the app's model: 'count' is not"))
        }
    }
}
