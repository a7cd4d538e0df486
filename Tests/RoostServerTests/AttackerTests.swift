import Foundation
import RoostTestSupport
import Testing

/// Collections that each hide a secret of alice's a different way; `Post` is public and refers to
/// them, so attackers can aim every read path at the secret through references.
let attackerDefinition = #"""
    {
      "settings": {"allowNewCollections": true},
      "collections": {
        "Acronym": {"rules": {"list": "public", "read": "public", "create": "loggedIn"}},
        "Diary": {"rules": {"read": "createdBy eq @user.guid"}},
        "Board": {"rules": {"read": "createdBy eq @user.guid or readers contains_any @user.groups"}},
        "Locked": {"rules": {"list": "none", "read": "none", "create": "none", "update": "none", "delete": "none"}},
        "Profile": {"ownerOnlyFields": ["secret"]},
        "FFUser": {"ownerOnlyFields": ["phone"]}
      }
    }
    """#

/// Alice's secrets, reachable only through references from public posts, and the probes an
/// attacker aims at them. The secret is set to the attacker's guess, then to something else, and
/// every answer must be the same both times: no answer may depend on what the attacker cannot read.
struct SecretWorld {
    let world: PermissionWorld
    /// Reference fields of a post, each pointing at one of alice's secret holders.
    static let holders = ["diary", "board", "locked", "profile", "acronym"]
    static let guess = "I love carol"
    let guids: [String: String]

    static func make() async throws -> SecretWorld {
        let world = try await PermissionWorld.make(definition: attackerDefinition)
        var guids: [String: String] = [:]
        for (field, collection, role) in [
            ("diary", "Diary", Role.owner), ("board", "Board", .owner), ("locked", "Locked", .admin),
            ("profile", "Profile", .owner), ("acronym", "Acronym", .owner),
        ] {
            let created = try await world.send(
                role, "POST", "/ff/resources/\(collection)",
                json: #"{"secret":"nothing","pin":1,"readers":["editors"]}"#)
            guard created.status == 201, let guid = created.json["guid"] as? String else {
                throw TestClientError(description: "\(collection): \(created.text)")
            }
            guids[field] = guid
        }
        // The acronym is public by its collection's rules, private by its access list.
        let acl = try await world.send(
            .owner, "PUT", "/ff/resources/Acronym/\(guids["acronym"]!)/ffACL",
            json: #"{"readUsers":["\#(world.guids[.owner]!)"]}"#)
        guard acl.status == 200 else { throw TestClientError(description: "acl: \(acl.text)") }
        let secretWorld = SecretWorld(world: world, guids: guids)
        // Alice's public post refers to all of them; so does bob's, which he made to probe with.
        for role in [Role.owner, .other] {
            let post = try await world.send(
                role, "POST", "/ff/resources/Post", json: secretWorld.postBody(by: role))
            guard post.status == 201 else { throw TestClientError(description: "post: \(post.text)") }
        }
        return secretWorld
    }

    func reference(_ field: String) -> String {
        let collection = field == "acronym" ? "Acronym" : field.prefix(1).uppercased() + field.dropFirst()
        return #"{"ffUrl":"/ff/resources/\#(collection)/\#(guids[field]!)"}"#
    }

    func postBody(by role: Role) -> String {
        let references = Self.holders.map { #""\#($0)":\#(reference($0))"# }.joined(separator: ",")
        let user = #"{"ffUrl":"/ff/resources/FFUser/\#(world.guids[.owner]!)"}"#
        return #"{"content":"post by \#(role.rawValue)",\#(references),"user":\#(user)}"#
    }

    /// Sets every secret of alice's: the guess, or something else.
    func setSecrets(toGuess: Bool) async throws {
        let secret = toGuess ? Self.guess : "I love dave"
        let pin = toGuess ? 4705 : 9999
        for field in Self.holders {
            let collection = field.prefix(1).uppercased() + field.dropFirst()
            let role = field == "locked" ? Role.admin : .owner
            // A profile's pin is public; only its secret is the owner's.
            let body =
                field == "profile" ? #"{"secret":"\#(secret)"}"# : #"{"secret":"\#(secret)","pin":\#(pin)}"#
            let patched = try await world.send(
                role, "PATCH", "/ff/resources/\(collection)/\(guids[field]!)", json: body)
            guard patched.status == 200 else {
                throw TestClientError(description: "\(field): \(patched.text)")
            }
        }
        let phone = try await world.send(
            .owner, "PATCH", "/ff/resources/FFUser/\(world.guids[.owner]!)", json: #"{"phone":"\#(secret)"}"#)
        guard phone.status == 200 else { throw TestClientError(description: "phone: \(phone.text)") }
    }

    /// Every read path, aimed at each secret.
    func probes() -> [String] {
        var paths: [String] = []
        let guess = Self.guess
        for field in Self.holders {
            for query in [
                "(\(field).secret eq '\(guess)')", "(\(field).secret matches '^I love c')",
                "(\(field).secret gte 'I love c' and \(field).secret lt 'I love d')",
                "(\(field).secret contains_any 'carol')", "(\(field).pin gt 4700 and \(field).pin lt 4712)",
                "(\(field).secret eq '\(guess)' and guid eq random(guid))",
            ] {
                paths.append("/ff/resources/Post/\(encodeQuery(query))?total=true")
            }
            paths.append("/ff/resources/Post?sort=\(field).secret%20desc,content")
            paths.append("/ff/resources/Post/\(encodeQuery("(\(field).secret ne '')"))/\(field)?depthRef=1")
            let collection = field.prefix(1).uppercased() + field.dropFirst()
            paths.append("/ff/resources/\(collection)/\(guids[field]!)")
            paths.append("/ff/resources/\(collection)/\(guids[field]!)/BackReferences.Post.\(field)")
            paths.append("/ff/resources/\(collection)/\(encodeQuery("(secret eq '\(guess)')"))?total=true")
        }
        for query in [
            "(user.phone eq '\(guess)')", "(user.phone matches '^I love c')", "(user.email matches '^alice')",
            "(user.phone eq '\(guess)' and guid eq random(guid))",
        ] {
            paths.append("/ff/resources/Post/\(encodeQuery(query))?total=true")
        }
        paths.append("/ff/resources/Post?depthRef=2&sort=content")
        paths.append("/ff/resources/Post/\(encodeQuery("(content ne '')"))/user")
        return paths
    }

    /// Status and body of every probe, without the update stamps that any write changes.
    func answers(as role: Role) async throws -> [String: String] {
        var answers: [String: String] = [:]
        for path in probes() {
            let response = try await world.send(role, "GET", path)
            answers[path] = "\(response.status) \(Self.withoutUpdateStamps(response.body))"
        }
        return answers
    }

    /// The body with `updatedAt`, `updatedBy` and `version` removed at every level: they say that
    /// a visible object changed, which is no secret, but not to what.
    static func withoutUpdateStamps(_ body: [UInt8]) -> String {
        func strip(_ value: Any) -> Any {
            if let object = value as? [String: Any] {
                return object.filter { !["updatedAt", "updatedBy", "version"].contains($0.key) }
                    .mapValues(strip)
            }
            if let array = value as? [Any] { return array.map(strip) }
            return value
        }
        guard let parsed = try? JSONSerialization.jsonObject(with: Data(body), options: [.fragmentsAllowed]),
            let data = try? JSONSerialization.data(withJSONObject: strip(parsed), options: [.sortedKeys])
        else { return String(decoding: body, as: UTF8.self) }
        return String(decoding: data, as: UTF8.self)
    }
}

@Suite("Attackers learn nothing through references")
struct AttackerTests {
    @Test("no answer to an anonymous caller or a stranger depends on a secret they cannot read")
    func noOracle() async throws {
        let world = try await SecretWorld.make()
        try await world.setSecrets(toGuess: true)
        let anonymousRight = try await world.answers(as: .anonymous)
        let strangerRight = try await world.answers(as: .other)
        try await world.setSecrets(toGuess: false)
        let anonymousWrong = try await world.answers(as: .anonymous)
        let strangerWrong = try await world.answers(as: .other)
        for path in world.probes() {
            if anonymousRight[path] != anonymousWrong[path] || strangerRight[path] != strangerWrong[path] {
                print("oracle: \(path)")
            }
            #expect(anonymousRight[path] == anonymousWrong[path], "anonymous: \(path)")
            #expect(strangerRight[path] == strangerWrong[path], "stranger: \(path)")
            for answer in [anonymousRight[path], strangerRight[path]] {
                #expect(answer?.contains("carol") == false, "secret in the answer to \(path)")
            }
        }
    }

    @Test("the probes are real: whoever may read a secret finds it through the same references")
    func probesWorkForTheOwner() async throws {
        let world = try await SecretWorld.make()
        try await world.setSecrets(toGuess: true)
        for field in ["diary", "board", "profile", "acronym"] {
            let response = try await world.world.send(
                .owner, "GET",
                "/ff/resources/Post/\(encodeQuery("(\(field).secret eq '\(SecretWorld.guess)')"))")
            #expect(PermissionWorld.guids(response).count == 2, "\(field): \(response.text)")
        }
        let phone = try await world.world.send(
            .owner, "GET", "/ff/resources/Post/\(encodeQuery("(user.phone eq '\(SecretWorld.guess)')"))")
        #expect(PermissionWorld.guids(phone).count == 2, "\(phone.text)")
        // The admin reads everything, the locked object too.
        let locked = try await world.world.send(
            .admin, "GET",
            "/ff/resources/Post/\(encodeQuery("(locked.pin gt 4700 and locked.pin lt 4712)"))?total=true")
        #expect(locked.json["total"] as? Int == 2, "\(locked.text)")
    }

    @Test("a group member reads the board through references; a stranger does not")
    func groupMemberReadsBoard() async throws {
        let world = try await SecretWorld.make()
        try await world.setSecrets(toGuess: true)
        let path = "/ff/resources/Post/\(encodeQuery("(board.secret eq '\(SecretWorld.guess)')"))"
        #expect(PermissionWorld.guids(try await world.world.send(.member, "GET", path)).count == 2)
        #expect(PermissionWorld.guids(try await world.world.send(.other, "GET", path)).isEmpty)
    }
}
