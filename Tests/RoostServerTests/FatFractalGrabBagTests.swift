import Foundation
import RoostCore
import RoostServer
import RoostTestSupport
import Testing

/// FatFractal's grab bags over `FFGrabBagItem` objects (issue 18).
@Suite("FatFractal grab bags") struct FatFractalGrabBagTests {
    @Test func addListAndRemoveMembers() async throws {
        let server = try await makeFatFractalServer()
        let anna = try await server.client.fatFractalRegister("anna")
        let bob = try await server.client.fatFractalRegister("bob")
        let board = try await server.client.ff(
            "POST", "/ff/resources/Board", #"{"name":"b"}"#, anna.authHeaders)
        let boardUrl = try #require(board.result["ffUrl"] as? String)
        var noteUrls: [String] = []
        for text in ["one", "two"] {
            let note = try await server.client.ff(
                "POST", "/ff/resources/Note", #"{"text":"\#(text)"}"#, anna.authHeaders)
            noteUrls.append(try #require(note.result["ffUrl"] as? String))
        }
        let empty = try await server.client.ff("GET", boardUrl + "/pinned")
        #expect(empty.text == #"{"statusMessage":"Retrieved","result":[]}"#)
        for url in noteUrls + [noteUrls[0]] {
            let added = try await server.client.ff(
                "POST", boardUrl + "/pinned", #"{"ffUrl":"\#(url)","AddOrRemove":"ADD"}"#, anna.authHeaders)
            #expect(added.status == 200, "\(added.text)")
            #expect(added.text == #"{"statusMessage":"Added to grab bag","result":null}"#)
        }
        let listed = try await server.client.ff("GET", boardUrl + "/pinned")
        let texts = (listed.json["result"] as? [[String: Any]])?.compactMap { $0["text"] as? String }
        #expect(texts?.sorted() == ["one", "two"])
        // Only who may update the parent changes its bags.
        let refused = try await server.client.ff(
            "POST", boardUrl + "/pinned", #"{"ffUrl":"\#(noteUrls[0])","AddOrRemove":"REMOVE"}"#,
            bob.authHeaders)
        #expect(refused.status == 403)
        #expect(refused.json["code"] as? String == "forbidden")
        // An error the dialect raises itself renders as the boundary renders it: with its headers.
        let anonymous = try await server.client.ff(
            "POST", boardUrl + "/pinned", #"{"ffUrl":"\#(noteUrls[0])","AddOrRemove":"REMOVE"}"#)
        #expect(anonymous.status == 401)
        #expect(anonymous.json["code"] as? String == "login_required")
        #expect(anonymous.header("WWW-Authenticate") == #"Bearer realm="roost""#)
        let removed = try await server.client.ff(
            "POST", boardUrl + "/pinned", #"{"ffUrl":"\#(noteUrls[0])","AddOrRemove":"REMOVE"}"#,
            anna.authHeaders)
        #expect(removed.text == #"{"statusMessage":"Removed from grab bag","result":null}"#)
        let after = try await server.client.ff("GET", boardUrl + "/pinned")
        #expect((after.json["result"] as? [[String: Any]])?.compactMap { $0["text"] as? String } == ["two"])
        let query = try await server.client.ff("GET", boardUrl + "/pinned/(text%20eq%20'two')")
        #expect(query.status == 501)
        #expect(query.json["code"] as? String == "grab_bag_query_unsupported")
        let malformed = try await server.client.ff(
            "POST", boardUrl + "/pinned", #"{"ffUrl":"x","AddOrRemove":"MAYBE"}"#, anna.authHeaders)
        #expect(malformed.status == 400)
        #expect(malformed.json["code"] as? String == "invalid_grab_bag_request")
    }
}
