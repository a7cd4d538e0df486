import Foundation
import RoostCore
import RoostTestSupport
import Testing

/// The docs' full app definition, taken from docs/access-rules.md itself, behaves as it says.
@Suite("The docs' app definition")
struct ReadmeDefinitionTests {
    /// The first JSON block under "Access rules and the app definition" (docs/access-rules.md).
    static func readmeDefinition() throws -> String {
        try DocumentationBlocks.first(
            "json", after: "Access rules and the app definition", in: "docs/access-rules.md")
    }

    private static func details(_ response: TestResponse) -> [String: String] {
        (response.json["details"] as? [String: Any] ?? [:]).compactMapValues { $0 as? String }
    }

    @Test("named collections take FatFractal's defaults, '*' the rest, and refusals name their rule")
    func endToEnd() async throws {
        let world = try await PermissionWorld.make(definition: try Self.readmeDefinition())
        let alice = world.guids[.owner]!
        // Undeclared operations of named collections are FatFractal's: logged-in users create.
        for collection in ["Diary", "Profile", "Micropost", "Board", "Invite", "Acronym"] {
            let created = try await world.send(
                .owner, "POST", "/ff/resources/\(collection)", json: #"{"a":1}"#)
            #expect(created.status == 201, "\(collection): \(created.text)")
        }
        let undeclared = try await world.send(.owner, "POST", "/ff/resources/Other", json: #"{"a":1}"#)
        #expect(undeclared.json["code"] as? String == "collection_not_allowed")

        let anonymous = try await world.send(.anonymous, "POST", "/ff/resources/Acronym", json: #"{"a":1}"#)
        #expect(anonymous.status == 401)
        #expect(anonymous.json["code"] as? String == "login_required")
        #expect(
            Self.details(anonymous) == ["collection": "Acronym", "operation": "create", "rule": "loggedIn"])

        let poll = try await world.send(.owner, "POST", "/ff/resources/Poll", json: #"{"owner":"\#(alice)"}"#)
        #expect(poll.status == 201)
        let forged = try await world.send(.owner, "POST", "/ff/resources/Poll", json: #"{"owner":"someone"}"#)
        #expect(forged.status == 403)
        #expect(
            Self.details(forged)
                == ["collection": "Poll", "operation": "create", "rule": "@request.body.owner eq @user.guid"])
        let pollPath = "/ff/resources/Poll/" + (poll.json["guid"] as? String ?? "")
        let delete = try await world.send(.owner, "DELETE", pollPath)
        #expect(delete.status == 403)
        #expect(Self.details(delete) == ["collection": "Poll", "operation": "delete", "rule": "none"])

        let post = try await world.send(.owner, "POST", "/ff/resources/Micropost", json: #"{"text":"hi"}"#)
        let postPath = "/ff/resources/Micropost/" + (post.json["guid"] as? String ?? "")
        let edit = try await world.send(.other, "PATCH", postPath, json: #"{"text":"mine"}"#)
        #expect(edit.status == 403)
        #expect(
            edit.text
                == #"{"status":403,"code":"forbidden","message":"The app's rules do not let you do this to this object.","details":{"collection":"Micropost","operation":"update","rule":"createdBy eq @user.guid"}}"#
        )

        let diary = try await world.send(.owner, "POST", "/ff/resources/Diary", json: #"{"text":"secret"}"#)
        #expect(
            try await world.send(.other, "GET", "/ff/resources/Diary/\(diary.json["guid"] as? String ?? "")")
                .status == 404)

        // Invite: opened by guid, never listed, counted or drawn.
        let invite = try await world.send(.owner, "POST", "/ff/resources/Invite", json: #"{"code":"x"}"#)
        let inviteGuid = try #require(invite.json["guid"] as? String)
        #expect(try await world.send(.anonymous, "GET", "/ff/resources/Invite/\(inviteGuid)").status == 200)
        let listed = try await world.send(.other, "GET", "/ff/resources/Invite?total=true")
        #expect(PermissionWorld.guids(listed).isEmpty)
        #expect(listed.json["total"] as? Int == 0)

        // The declared group exists, owned by nobody, and nobody but an admin or its manager joins it.
        let hr = try await world.send(.owner, "GET", "/ff/resources/FFUserGroup/hr")
        #expect(hr.status == 200)
        #expect(hr.json["createdBy"] is NSNull)
        let join = try await world.send(
            .owner, "PATCH", "/ff/resources/FFUserGroup/hr",
            json: #"{"users":["\#(alice)"]}"#)
        #expect(join.status == 403)
        await world.server.stop()
    }
}
