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

    /// A board of anna's with one note of anna's in its bag `pinned`; the board's and note's urls.
    static func pinnedBoard(
        _ server: TestServer, _ anna: FatFractalLogin, boardBody: String = #"{"name":"b"}"#
    )
        async throws -> (board: String, note: String)
    {
        let board = try await server.client.ff("POST", "/ff/resources/Board", boardBody, anna.authHeaders)
        let boardUrl = try #require(board.result["ffUrl"] as? String, "\(board.text)")
        let note = try await server.client.ff(
            "POST", "/ff/resources/Note", #"{"text":"one"}"#, anna.authHeaders)
        let noteUrl = try #require(note.result["ffUrl"] as? String)
        let added = try await server.client.ff(
            "POST", boardUrl + "/pinned", #"{"ffUrl":"\#(noteUrl)","AddOrRemove":"ADD"}"#, anna.authHeaders)
        #expect(added.status == 200, "\(added.text)")
        return (boardUrl, noteUrl)
    }

    @Test(
        "FFGrabBagItem is reserved: no client reads or writes memberships directly, so none joins a bag it may not change"
    )
    func membershipsAreReserved() async throws {
        let server = try await makeFatFractalServer()
        defer { Task { await server.stop() } }
        let anna = try await server.client.fatFractalRegister("anna")
        let mallory = try await server.client.fatFractalRegister("mallory")
        let (boardUrl, _) = try await Self.pinnedBoard(server, anna)
        let spam = try await server.client.ff(
            "POST", "/ff/resources/Note", #"{"text":"spam"}"#, mallory.authHeaders)
        let spamUrl = try #require(spam.result["ffUrl"] as? String)
        let forged = #"{"parentUrl":"\#(boardUrl)","bag":"pinned","item":{"ffUrl":"\#(spamUrl)"}}"#
        for (method, path, body) in [
            ("POST", "/ff/resources/FFGrabBagItem", forged), ("GET", "/ff/resources/FFGrabBagItem", nil),
            ("GET", "/ff/resources/FFGrabBagItem/(bag%20eq%20'pinned')", nil),
            ("DELETE", "/ff/resources/FFGrabBagItem/x", nil),
        ] as [(String, String, String?)] {
            for headers in [mallory.authHeaders, anna.authHeaders] {
                let refused = try await server.client.ff(method, path, body, headers)
                #expect(refused.status == 403, "\(method) \(path): \(refused.text)")
                #expect(refused.json["code"] as? String == "collection_reserved", "\(refused.text)")
            }
            // The native API says the same.
            let native = try await server.client.send(
                method, path, json: body ?? "{}", headers: [("X-Token", mallory.sessionId)])
            #expect(native.json["code"] as? String == "collection_reserved", "\(native.text)")
        }
        // Nor finds them as back references of an item, with or without a token.
        let annaGuid = anna.userGuid
        for headers in [mallory.authHeaders, []] {
            let back = try await server.client.ff(
                "GET", "/ff/resources/FFUser/\(annaGuid)/BackReferences.FFGrabBagItem.item", nil, headers)
            #expect(back.status == 403, "\(back.text)")
            #expect(back.json["code"] as? String == "collection_reserved")
        }
        // Nor uses a membership as a bag's parent or member, which would tell whether one exists.
        for (path, body) in [
            ("/ff/resources/FFGrabBagItem/gbx/x", #"{"ffUrl":"\#(spamUrl)","AddOrRemove":"ADD"}"#),
            (boardUrl + "/pinned", #"{"ffUrl":"/ff/resources/FFGrabBagItem/gbx","AddOrRemove":"ADD"}"#),
        ] {
            let probe = try await server.client.ff("POST", path, body, mallory.authHeaders)
            #expect(probe.status == 403, "\(path): \(probe.text)")
            #expect(probe.json["code"] as? String == "collection_reserved", "\(probe.text)")
        }
        // Nor watches them come and go.
        let watched = try await server.client.send(
            "GET", "/ff/events?collection=FFGrabBagItem", headers: [("X-Token", mallory.sessionId)])
        #expect(watched.status == 403, "\(watched.text)")
        #expect(watched.json["code"] as? String == "collection_reserved")
        let listed = try await server.client.ff("GET", boardUrl + "/pinned")
        #expect((listed.json["result"] as? [[String: Any]])?.compactMap { $0["text"] as? String } == ["one"])
    }

    @Test(
        "grab bags work with allowNewCollections false, and whoever may update the parent removes any member")
    func bagsUnderDeclaredCollections() async throws {
        let server = try await makeFatFractalServer(
            definition: #"""
                {"settings": {"allowNewCollections": false}, "collections": {"Note": {}, "Board": {"rules": {"update": "loggedIn"}}}}
                """#)
        defer { Task { await server.stop() } }
        let anna = try await server.client.fatFractalRegister("anna")
        let bob = try await server.client.fatFractalRegister("bob")
        let (boardUrl, noteUrl) = try await Self.pinnedBoard(server, anna)
        let removed = try await server.client.ff(
            "POST", boardUrl + "/pinned", #"{"ffUrl":"\#(noteUrl)","AddOrRemove":"REMOVE"}"#, bob.authHeaders)
        #expect(removed.status == 200, "\(removed.text)")
        let after = try await server.client.ff("GET", boardUrl + "/pinned")
        #expect(after.text == #"{"statusMessage":"Retrieved","result":[]}"#)
    }

    @Test("a bag of a parent the caller may not read answers as reading the parent would")
    func bagsOfUnreadableParents() async throws {
        let server = try await makeFatFractalServer(
            definition: #"{"collections": {"Board": {"rules": {"read": "createdBy eq @user.guid"}}}}"#)
        defer { Task { await server.stop() } }
        let anna = try await server.client.fatFractalRegister("anna")
        let mallory = try await server.client.fatFractalRegister("mallory")
        let (boardUrl, _) = try await Self.pinnedBoard(server, anna)
        let parent = try await server.client.ff("GET", boardUrl, nil, mallory.authHeaders)
        let bag = try await server.client.ff("GET", boardUrl + "/pinned", nil, mallory.authHeaders)
        #expect(parent.status == 404)
        #expect(bag.status == parent.status, "\(bag.text)")
        #expect(bag.json["code"] as? String == parent.json["code"] as? String)
        let own = try await server.client.ff("GET", boardUrl + "/pinned", nil, anna.authHeaders)
        #expect((own.json["result"] as? [[String: Any]])?.count == 1, "\(own.text)")
    }
}
