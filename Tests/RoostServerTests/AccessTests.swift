import Foundation
import RoostCore
import RoostTestSupport
import Testing

@Suite("Access lists, owner-only fields, users and admins")
struct AccessTests {
    @Test("an ACL narrows public reading to named users and widens owner-only reading to a group")
    func accessLists() async throws {
        let world = try await PermissionWorld.make()
        let bob = world.guids[.other]!
        let micropost = "/ff/resources/Micropost"
        let diary = "/ff/resources/Diary"
        var table: [APIScenario] = [
            APIScenario(
                name: "alice creates p1", caller: "owner", method: "POST", path: micropost,
                body: #"{"guid":"p1"}"#, status: 201, changes: ["create Micropost/p1"]),
            APIScenario(
                name: "alice creates p2", caller: "owner", method: "POST", path: micropost,
                body: #"{"guid":"p2"}"#, status: 201, changes: ["create Micropost/p2"]),
            APIScenario(
                name: "p1 has no ACL", caller: "owner", method: "GET", path: "\(micropost)/p1/ffACL",
                status: 200,
                exactBody: "{}", changes: []),
            APIScenario(
                name: "alice lets bob read p1", caller: "owner", method: "PUT", path: "\(micropost)/p1/ffACL",
                body: #"{"readUsers":["\#(bob)"]}"#, status: 200,
                exactBody: #"{"readUsers":["\#(bob)"],"readGroups":[],"writeUsers":[],"writeGroups":[]}"#,
                changes: ["update Micropost/p1"]),
        ]
        for (role, status) in [
            (Role.anonymous, 404), (.other, 200), (.member, 404), (.owner, 200), (.admin, 200),
        ] {
            let caller = role == .anonymous ? nil : role.rawValue
            table.append(
                APIScenario(
                    name: "\(role) reads p1", caller: caller, method: "GET", path: "\(micropost)/p1",
                    status: status,
                    changes: []))
            table.append(
                APIScenario(
                    name: "\(role) lists", caller: caller, method: "GET", path: "\(micropost)?total=true",
                    status: 200,
                    contains: [#""guid":"p2""#] + (status == 200 ? [#""guid":"p1""#] : []),
                    excludes: status == 200 ? [] : [#""guid":"p1""#]))
        }
        table += [
            // bob may read but not write; the ACL is not part of the object's JSON.
            APIScenario(
                name: "bob may not write p1", caller: "other", method: "PATCH", path: "\(micropost)/p1",
                body: "{}",
                status: 403, code: "forbidden", changes: []),
            APIScenario(
                name: "the ACL is not in the object", caller: "other", method: "GET", path: "\(micropost)/p1",
                status: 200, excludes: ["ffACL"]),
            APIScenario(
                name: "alice creates d1", caller: "owner", method: "POST", path: diary,
                body: #"{"guid":"d1"}"#,
                status: 201, changes: ["create Diary/d1"]),
            APIScenario(
                name: "carol may not read d1", caller: "member", method: "GET", path: "\(diary)/d1",
                status: 404),
            APIScenario(
                name: "alice widens d1 to editors and bob", caller: "owner", method: "PUT",
                path: "\(diary)/d1/ffACL",
                body: #"{"readGroups":["editors"],"writeUsers":["\#(bob)"]}"#, status: 200,
                changes: ["update Diary/d1"]),
            APIScenario(
                name: "carol reads d1 as an editor", caller: "member", method: "GET", path: "\(diary)/d1",
                status: 200),
            APIScenario(
                name: "carol may not write d1", caller: "member", method: "PATCH", path: "\(diary)/d1",
                body: "{}",
                status: 403, changes: []),
            APIScenario(
                name: "bob writes d1", caller: "other", method: "PATCH", path: "\(diary)/d1",
                body: #"{"x":1}"#,
                status: 200, changes: ["update Diary/d1"]),
            APIScenario(
                name: "bob reads d1", caller: "other", method: "GET", path: "\(diary)/d1", status: 200),
            APIScenario(
                name: "alice drops d1's ACL", caller: "owner", method: "DELETE", path: "\(diary)/d1/ffACL",
                status: 204, changes: ["update Diary/d1"]),
            APIScenario(
                name: "carol may not read d1 again", caller: "member", method: "GET", path: "\(diary)/d1",
                status: 404),
        ]
        try await world.server.run(table, tokens: world.callerTokens)
        await world.server.stop()
    }

    static let badACLs: [(String, String)] = [
        (#"{"readers":[]}"#, "readers"), (#"{"readUsers":"x"}"#, "readUsers"),
        (#"{"readUsers":[1]}"#, "readUsers"), (#"{"readGroups":["*"]}"#, "readGroups"),
        (#"{"writeUsers":["a b"]}"#, "writeUsers"),
    ]

    @Test("a malformed ACL is a 400 naming the list, and the object keeps its old one", arguments: badACLs)
    func badACL(_ body: String, _ field: String) async throws {
        let world = try await PermissionWorld.make()
        #expect(
            try await world.send(.owner, "POST", "/ff/resources/Micropost", json: #"{"guid":"p1"}"#).status
                == 201)
        let response = try await world.send(.owner, "PUT", "/ff/resources/Micropost/p1/ffACL", json: body)
        #expect(response.status == 400)
        #expect(response.json["code"] as? String == "invalid_field")
        #expect((response.json["details"] as? [String: Any])?["field"] as? String == field)
        let object = try await world.send(.anonymous, "GET", "/ff/resources/Micropost/p1")
        #expect(object.status == 200)
        #expect(object.json["version"] as? Int == 1)
        let forged = try await world.send(
            .owner, "PATCH", "/ff/resources/Micropost/p1", json: #"{"ffACL":{}}"#)
        #expect(forged.status == 400)
        #expect(forged.json["code"] as? String == "read_only_field")
        await world.server.stop()
    }

    @Test(
        "owner-only fields are stripped, cannot be matched or sorted on by others, and createdBy cannot be forged"
    )
    func ownerOnlyFields() async throws {
        let world = try await PermissionWorld.make()
        let created = try await world.send(
            .owner, "POST", "/ff/resources/Profile", json: #"{"guid":"pr1","name":"A","secret":"s3"}"#)
        #expect(created.json["secret"] as? String == "s3")
        for (role, sees) in [(Role.anonymous, false), (.other, false), (.owner, true), (.admin, true)] {
            let read = try await world.send(role, "GET", "/ff/resources/Profile/pr1")
            #expect((read.json["secret"] != nil) == sees, "\(role) read")
            let query = try await world.send(
                role, "GET", "/ff/resources/Profile/" + encodeQuery("(secret eq 's3')"))
            #expect(PermissionWorld.guids(query) == (sees ? ["pr1"] : []), "\(role) query")
            let negated = try await world.send(
                role, "GET", "/ff/resources/Profile/" + encodeQuery("(not (secret eq 's3'))"))
            #expect(PermissionWorld.guids(negated) == (sees ? [] : ["pr1"]), "\(role) negated query")
            let sorted = try await world.send(role, "GET", "/ff/resources/Profile?sort=secret")
            #expect(sorted.status == (role == .admin ? 200 : 400), "\(role) sort")
        }
        // A user's email is theirs and the admins'.
        let alice = world.guids[.owner]!
        for (role, sees) in [(Role.other, false), (.owner, true), (.admin, true)] {
            let read = try await world.send(role, "GET", "/ff/resources/FFUser/\(alice)")
            #expect((read.json["email"] as? String == "alice@example.com") == sees, "\(role) email")
            let inlined = try await world.send(
                role, "GET", "/ff/resources/FFUser/" + encodeQuery("(email eq 'alice@example.com')"))
            #expect(PermissionWorld.guids(inlined) == (sees ? [alice] : []), "\(role) email query")
        }
        #expect(
            try await world.send(.anonymous, "GET", "/ff/resources/FFUser?total=true").json["total"] as? Int
                == 0)
        let forged = try await world.send(
            .other, "POST", "/ff/resources/Micropost", json: #"{"createdBy":"\#(alice)"}"#)
        #expect(forged.status == 400)
        #expect(forged.json["code"] as? String == "read_only_field")
        await world.server.stop()
    }

    @Test("users edit their own profile; only admins set admin or active; admins manage sessions")
    func usersAndAdmins() async throws {
        let world = try await PermissionWorld.make()
        let alice = world.guids[.owner]!
        let path = "/ff/resources/FFUser/\(alice)"
        #expect(try await world.send(.owner, "PATCH", path, json: #"{"firstName":"Alice"}"#).status == 200)
        #expect(try await world.send(.other, "PATCH", path, json: #"{"firstName":"Eve"}"#).status == 403)
        let promote = try await world.send(.owner, "PATCH", path, json: #"{"admin":true}"#)
        #expect(promote.status == 403)
        #expect(promote.json["message"] as? String == "Only an administrator can change 'admin'.")
        let rename = try await world.send(.owner, "PATCH", path, json: #"{"userName":"mallory"}"#)
        #expect(rename.status == 400)
        #expect(try await world.send(.owner, "DELETE", path).status == 403)

        let sessions = try await world.send(.admin, "GET", "/ff/admin/sessions?user=\(alice)")
        #expect(sessions.status == 200)
        let ids = (sessions.json["items"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
        #expect(ids.count == 1)
        #expect(
            try await world.send(.other, "GET", "/ff/admin/sessions?user=\(alice)").json["code"] as? String
                == "admin_required")
        #expect(try await world.send(.anonymous, "GET", "/ff/admin/sessions?user=\(alice)").status == 401)
        #expect(try await world.send(.admin, "DELETE", "/ff/admin/sessions/\(ids[0])").status == 204)
        #expect(try await world.send(.owner, "GET", "/ff/session").text == #"{"loggedIn":false}"#)

        // Deactivating a user ends their sessions at once.
        let bob = world.guids[.other]!
        #expect(
            try await world.send(.admin, "PATCH", "/ff/resources/FFUser/\(bob)", json: #"{"active":false}"#)
                .status == 200)
        let refused = try await world.send(.other, "GET", "/ff/resources/Micropost")
        #expect(refused.status == 401)
        #expect(refused.json["code"] as? String == "invalid_token")
        await world.server.stop()
    }

    @Test("closed registration and no new collections are enforced from the definition")
    func settings() async throws {
        let world = try await PermissionWorld.make()
        try await world.apply(
            #"{"settings":{"registration":"closed","allowNewCollections":false},"collections":{"Note":{}}}"#)
        let register = try await world.server.client.register("zed")
        #expect(register.status == 403)
        #expect(register.json["code"] as? String == "registration_closed")
        #expect(try await world.send(.owner, "POST", "/ff/resources/Note", json: "{}").status == 201)
        let stray = try await world.send(.owner, "POST", "/ff/resources/Stray", json: "{}")
        #expect(stray.status == 403)
        #expect(stray.json["code"] as? String == "collection_not_allowed")
        #expect(try await world.send(.admin, "POST", "/ff/resources/Stray", json: "{}").status == 201)
        await world.server.stop()
    }

    /// Read rules over varied documents: the SQL list and the in-memory single-object check must agree.
    static let differentialRules = [
        "n gt 3", "n ne 2 and tag eq 'a'", "tags contains_any 'x y'", "tags contains_all 'x y'",
        "name matches '^A'", "not (flag eq true) or n lte 1.5", "nested.k eq null", "owner eq @user.guid",
        "n eq '3'", "createdBy eq @user.guid or tags contains_any @user.groups",
    ]

    @Test(
        "a list (SQL), single reads (in memory) and event streams (in memory) agree on every rule",
        arguments: differentialRules)
    func listAndReadAgree(_ rule: String) async throws {
        let definition =
            #"{"collections":{"Doc":{"rules":{"read":"\#(rule)","create":"public"}},"Marker":{"rules":{"read":"public"}}}}"#
        let world = try await PermissionWorld.make(definition: definition)
        let bob = world.guids[.other]!
        var streams: [Role: EventStreamReader] = [:]
        for role in [Role.anonymous, .other, .member] {
            streams[role] = try await subscribe(
                world.server, "subscribe=Doc&subscribe=Marker", headers: world.headers(role))
        }
        var generator = SystemRandomNumberGenerator()
        let values = [#"1"#, #"2"#, #"3"#, #"3.5"#, #""3""#, "true", "null", #""a""#, #"["x"]"#, #"{"k":1}"#]
        for index in 0..<60 {
            var fields = [#""guid":"d\#(index)""#]
            for field in ["n", "tag", "flag", "name", "owner"] where Bool.random(using: &generator) {
                fields.append(#""\#(field)":\#(values.randomElement(using: &generator)!)"#)
            }
            if Bool.random(using: &generator) { fields.append(#""owner":"\#(bob)""#) }
            if Bool.random(using: &generator) { fields.append(#""name":"Ann""#) }
            if Bool.random(using: &generator) { fields.append(#""tags":["x","editors"]"#) }
            if Bool.random(using: &generator) { fields.append(#""tags":"y x""#) }
            if Bool.random(using: &generator) { fields.append(#""nested":{"k":null}"#) }
            let created = try await world.send(
                .anonymous, "POST", "/ff/resources/Doc", json: "{" + fields.joined(separator: ",") + "}")
            #expect(created.status == 201 || created.status == 400, "\(created.text)")
        }
        for role in [Role.anonymous, .other, .member] {
            let listed = PermissionWorld.guids(
                try await world.send(role, "GET", "/ff/resources/Doc?count=1000"))
            var readable = Set<String>()
            for index in 0..<60
            where try await world.send(role, "GET", "/ff/resources/Doc/d\(index)").status == 200 {
                readable.insert("d\(index)")
            }
            #expect(listed == readable, "\(rule) as \(role)")
            // The stream heard of exactly the objects the list shows, before the marker.
            if role == .anonymous {
                _ = try await world.send(.admin, "POST", "/ff/resources/Marker", json: "{}")
            }
            var heard = Set<String>()
            while let event = try await streams[role]!.next(), event.json["ffUrl"] as? String != nil,
                !(event.json["ffUrl"] as! String).hasPrefix("/ff/resources/Marker/")
            {
                heard.insert(event.guid ?? "")
            }
            #expect(heard == listed, "\(rule) as \(role): events")
        }
        await world.server.stop()
    }
}
