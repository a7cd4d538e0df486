import Foundation
import RoostCore
import RoostHTTP
import RoostTestSupport
import Testing

/// `GET /ff/admin/collections` and `GET /ff/admin/collections/{name}/objects`: what the
/// dashboard reads, for administrators only, at a bounded cost (issue 30).
@Suite("Admin collections and keyset pages")
struct AdminCollectionsTests {
    /// Creates `count` objects `{"n": i}` in `collection`, 25 at a time; returns their guids in order.
    static func fill(_ world: PermissionWorld, _ collection: String, count: Int) async throws -> [String] {
        var guids: [String] = []
        for batch in stride(from: 0, to: count, by: 25) {
            let made = try await withThrowingTaskGroup(of: (Int, String).self) { group in
                for n in batch..<min(batch + 25, count) {
                    group.addTask {
                        let created = try await world.send(
                            .admin, "POST", "/ff/resources/\(collection)", json: #"{"n":\#(n)}"#)
                        guard created.status == 201, let guid = created.json["guid"] as? String else {
                            throw TestClientError(description: "create \(n): \(created.text)")
                        }
                        return (n, guid)
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            guids += made.sorted { $0.0 < $1.0 }.map(\.1)
        }
        return guids
    }

    static func items(_ response: TestResponse) -> [[String: Any]] {
        response.json["items"] as? [[String: Any]] ?? []
    }

    @Test("anonymous callers get 401, other users 403, a bad token 401, before any work")
    func onlyAdministrators() async throws {
        let world = try await PermissionWorld.make()
        defer { Task { await world.server.stop() } }
        for path in ["/ff/admin/collections", "/ff/admin/collections/Note/objects?filter=((("] {
            let anonymous = try await world.send(.anonymous, "GET", path)
            #expect(anonymous.status == 401)
            #expect(anonymous.json["code"] as? String == "login_required")
            for role in [Role.owner, .other, .member] {
                let refused = try await world.send(role, "GET", path)
                #expect(refused.status == 403, "\(role) \(path)")
                #expect(refused.json["code"] as? String == "admin_required")
            }
            let forged = try await world.server.client.send(
                "GET", path, headers: [("X-Token", "not-a-token")])
            #expect(forged.status == 401)
            #expect(forged.json["code"] as? String == "invalid_token")
        }
    }

    @Test("collections are listed by name with counts that stop at the limit unless exact is asked")
    func collectionsWithBoundedCounts() async throws {
        let world = try await PermissionWorld.make()
        defer { Task { await world.server.stop() } }
        _ = try await Self.fill(world, "Note", count: 12)
        _ = try await Self.fill(world, "Apple", count: 2)
        let listed = try await world.send(.admin, "GET", "/ff/admin/collections")
        #expect(listed.status == 200, "\(listed.text)")
        let items = Self.items(listed)
        let names = items.compactMap { $0["name"] as? String }
        #expect(names == names.sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) })
        #expect(names.contains("FFUser") && names.contains("FFUserGroup"))
        let note = try #require(items.first { $0["name"] as? String == "Note" })
        #expect(note["count"] as? Int == 12)
        #expect(note["exact"] as? Bool == true)
        #expect(listed.json["truncated"] as? Bool == false)
        #expect(listed.json["countLimit"] as? Int == 10_000)
        #expect(try await world.send(.admin, "GET", "/ff/admin/collections?exact=yes").status == 400)
    }

    @Test("a count stops at countLimit (exact false); the list stops at its collection limit")
    func limitsOfTheListing() async throws {
        let directory = try await makeDataFolder()
        let admin = try await runRoost(
            ["users", "create", "dave", "--admin", "--data-dir", directory], input: "dave-password\n")
        #expect(admin.status == 0, "\(admin.errorOutput)")
        let server = try await TestServer(dataDirectory: directory) { configuration in
            configuration.passwordHasher = PasswordHasher.cheapForTests()
            configuration.collectionListing.countLimit = 5
            configuration.collectionListing.collections = 2
        }
        defer { Task { await server.stop() } }
        let token = try await server.client.login("dave", password: "dave-password")
        for (collection, count) in [("Alpha", 7), ("Beta", 1)] {
            for n in 0..<count {
                let made = try await server.client.send(
                    "POST", "/ff/resources/\(collection)", json: #"{"n":\#(n)}"#,
                    headers: [("X-Token", token)])
                #expect(made.status == 201)
            }
        }
        let listed = try await server.client.send(
            "GET", "/ff/admin/collections", headers: [("X-Token", token)])
        let items = Self.items(listed)
        #expect(items.compactMap { $0["name"] as? String } == ["Alpha", "Beta"])
        #expect(items.first?["count"] as? Int == 6)
        #expect(items.first?["exact"] as? Bool == false)
        #expect(listed.json["truncated"] as? Bool == true)
        let exact = try await server.client.send(
            "GET", "/ff/admin/collections?exact=1", headers: [("X-Token", token)])
        #expect(Self.items(exact).first?["count"] as? Int == 7)
        #expect(Self.items(exact).first?["exact"] as? Bool == true)
    }

    @Test("1,000 objects paged by cursor: each seen exactly once, in creation order, and back again")
    func pagingByCursor() async throws {
        let world = try await PermissionWorld.make()
        defer { Task { await world.server.stop() } }
        let guids = try await Self.fill(world, "Note", count: 1000)
        var seen: [String] = []
        var pages: [[String]] = []
        var cursors: [String?] = [nil]
        var after: String? = nil
        repeat {
            let path = "/ff/admin/collections/Note/objects?limit=200" + (after.map { "&after=" + $0 } ?? "")
            let page = try await world.send(.admin, "GET", path)
            #expect(page.status == 200, "\(page.text)")
            let items = Self.items(page).compactMap { $0["guid"] as? String }
            pages.append(items)
            seen += items
            #expect((page.json["previous"] is NSNull) == (after == nil))
            after = page.json["next"] as? String
            cursors.append(after)
        } while after != nil && pages.count < 10
        #expect(seen.count == 1000)
        #expect(Set(seen).count == 1000)
        #expect(Set(seen) == Set(guids))
        #expect(pages.count == 5)
        // Back from the fourth page gives the third, exactly.
        let fourth = try await world.send(
            .admin, "GET", "/ff/admin/collections/Note/objects?limit=200&after=\(cursors[3]!)")
        let previous = try #require(fourth.json["previous"] as? String)
        let third = try await world.send(
            .admin, "GET", "/ff/admin/collections/Note/objects?limit=200&before=\(previous)")
        #expect(Self.items(third).compactMap { $0["guid"] as? String } == pages[2])
        #expect(third.json["next"] as? String != nil)
        // Back from the second page is the first, which has no page before it.
        let first = try await world.send(
            .admin, "GET",
            "/ff/admin/collections/Note/objects?limit=200&before=\(try #require(Self.previous(world, cursors[1]!)))"
        )
        #expect(Self.items(first).compactMap { $0["guid"] as? String } == pages[0])
        #expect(first.json["previous"] is NSNull)
        // The default page is 50; a filter pages the same way.
        let small = try await world.send(.admin, "GET", "/ff/admin/collections/Note/objects")
        #expect(Self.items(small).count == 50)
        let filtered = try await world.send(
            .admin, "GET", "/ff/admin/collections/Note/objects?limit=4&filter=n%20lt%206")
        let firstFour = Self.items(filtered).compactMap { $0["n"] as? Int }
        #expect(firstFour.count == 4)
        let rest = try await world.send(
            .admin, "GET",
            "/ff/admin/collections/Note/objects?limit=4&filter=n%20lt%206&after=\(filtered.json["next"] as! String)"
        )
        let lastTwo = Self.items(rest).compactMap { $0["n"] as? Int }
        #expect((firstFour + lastTwo).sorted() == [0, 1, 2, 3, 4, 5])
        #expect(rest.json["next"] is NSNull)
    }

    static func previous(_ world: PermissionWorld, _ cursor: String) async throws -> String? {
        let page = try await world.send(
            .admin, "GET", "/ff/admin/collections/Note/objects?limit=200&after=\(cursor)")
        return page.json["previous"] as? String
    }

    @Test("a bad cursor, limit or filter is a 400 that says which, a query error at its column")
    func badRequests() async throws {
        let world = try await PermissionWorld.make()
        defer { Task { await world.server.stop() } }
        _ = try await Self.fill(world, "Note", count: 3)
        let base = "/ff/admin/collections/Note/objects"
        for (query, parameter) in [
            ("after=zzz", "after"), ("after=o-1", "after"), ("before=", "before"), ("after=o%2B1", "after"),
            ("after=o1&before=o2", "before"), ("limit=0", "limit"), ("limit=201", "limit"),
            ("limit=ten", "limit"),
        ] {
            let refused = try await world.send(.admin, "GET", base + "?" + query)
            #expect(refused.status == 400, "\(query)")
            #expect(refused.json["code"] as? String == "invalid_parameter", "\(query)")
            #expect(
                (refused.json["details"] as? [String: Any])?["parameter"] as? String == parameter, "\(query)")
        }
        let broken = try await world.send(.admin, "GET", base + "?filter=n%20gt%20")
        #expect(broken.status == 400)
        #expect(broken.json["code"] as? String == "invalid_query")
        let details = try #require(broken.json["details"] as? [String: Any])
        #expect(details["column"] as? Int == 6)
        #expect(details["query"] as? String == "n gt ")
        let random = try await world.send(.admin, "GET", base + "?filter=guid%20eq%20random(guid)")
        #expect(random.json["code"] as? String == "invalid_query")
        let badName = try await world.send(.admin, "GET", "/ff/admin/collections/9bad/objects")
        #expect(badName.json["code"] as? String == "invalid_collection")
        let empty = try await world.send(.admin, "GET", "/ff/admin/collections/Nothing/objects")
        #expect(empty.status == 200)
        #expect(empty.text == #"{"items":[],"next":null,"previous":null}"#)
    }

    @Test("administration takes no cookie: a cookie-borne admin token is refused, even for a write (CSRF)")
    func noCookies() async throws {
        let world = try await PermissionWorld.make()
        defer { Task { await world.server.stop() } }
        let admin = world.tokens[.admin]!
        let sessions = try await world.send(.admin, "GET", "/ff/admin/sessions?user=\(world.guids[.owner]!)")
        let session = try #require(Self.items(sessions).first?["id"] as? String)
        // FatFractal's clients send Data-type; with it the cookie is a session, except here.
        for (method, path) in [
            ("DELETE", "/ff/admin/sessions/\(session)"), ("GET", "/ff/admin/collections"),
            ("GET", "/ff/admin/sessions?user=\(world.guids[.owner]!)"),
            // The router ignores empty segments; the refusal must too (found by review).
            ("DELETE", "/ff//admin/sessions/\(session)"), ("GET", "//ff/admin//collections"),
        ] {
            let refused = try await world.server.client.send(
                method, path, headers: [("Cookie", "sessionId=\(admin)"), ("Data-type", "json")])
            #expect(refused.status == 403, "\(method) \(path): \(refused.text)")
            #expect(refused.text.contains("token_header_required"), "\(refused.text)")
            // Without the dialect's header no cookie is read at all.
            let anonymous = try await world.server.client.send(
                method, path, headers: [("Cookie", "sessionId=\(admin)")])
            #expect(anonymous.status == 401)
            #expect(anonymous.json["code"] as? String == "login_required")
        }
        // The session survived both attempts.
        let alive = try await world.send(.owner, "GET", "/ff/session")
        #expect(alive.json["loggedIn"] as? Bool == true)
        #expect(try await world.send(.admin, "DELETE", "/ff/admin/sessions/\(session)").status == 204)
        let revoked = try await world.send(.owner, "GET", "/ff/tokens")
        #expect(revoked.status == 401)
        #expect(revoked.json["code"] as? String == "invalid_token")
    }
}
