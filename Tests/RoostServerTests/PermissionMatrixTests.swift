import Foundation
import RoostTestSupport
import Testing

/// What one role sees and may do in one rule setup.
struct Expectation: Sendable {
    /// How many of the setup's 6 objects the role lists, counts and can draw at random.
    let visible: Int
    let read: Int
    let create: Int
    let update: Int
    let delete: Int
}

/// One rule setup: a collection, who creates its objects, their fields, and each role's outcome.
struct RuleSetup: CustomTestStringConvertible, Sendable {
    let name: String
    let collection: String
    var creator = Role.owner
    /// Fields of every seeded object; `OWNER` becomes the creator's guid.
    var fields = #""title":"t""#
    /// The body a role sends to create; `ME` becomes its own guid.
    var createBody = #"{"title":"new"}"#
    let outcomes: [Role: Expectation]

    var testDescription: String { name }
}

private func e(_ visible: Int, _ read: Int, _ create: Int, _ update: Int, _ delete: Int) -> Expectation {
    Expectation(visible: visible, read: read, create: create, update: update, delete: delete)
}

let ruleSetups: [RuleSetup] = [
    RuleSetup(
        name: "seed 002 Acronym: anyone lists, logged-in users add, owners change",
        collection: "Acronym",
        outcomes: [
            .anonymous: e(6, 200, 401, 401, 401), .other: e(6, 200, 201, 403, 403),
            .owner: e(6, 200, 201, 200, 204), .member: e(6, 200, 201, 403, 403),
            .admin: e(6, 200, 201, 200, 204),
        ]),
    RuleSetup(
        name: "seed 000 Micropost: FatFractal's defaults, only the author updates",
        collection: "Micropost",
        outcomes: [
            .anonymous: e(6, 200, 401, 401, 401), .other: e(6, 200, 201, 403, 403),
            .owner: e(6, 200, 201, 200, 204), .member: e(6, 200, 201, 403, 403),
            .admin: e(6, 200, 201, 200, 204),
        ]),
    RuleSetup(
        name: "Diary: owner-only reading hides objects as 404",
        collection: "Diary",
        outcomes: [
            .anonymous: e(0, 404, 401, 404, 404), .other: e(0, 404, 201, 404, 404),
            .owner: e(6, 200, 201, 200, 204), .member: e(0, 404, 201, 404, 404),
            .admin: e(6, 200, 201, 200, 204),
        ]),
    RuleSetup(
        name: "Board: group members read and edit, only the owner deletes",
        collection: "Board", fields: #""title":"t","readers":["editors"],"editors":["editors"]"#,
        outcomes: [
            .anonymous: e(0, 404, 401, 404, 404), .other: e(0, 404, 201, 404, 404),
            .owner: e(6, 200, 201, 200, 204), .member: e(6, 200, 201, 200, 403),
            .admin: e(6, 200, 201, 200, 204),
        ]),
    RuleSetup(
        name: "Locked: none for everything, only admins",
        collection: "Locked", creator: .admin,
        outcomes: [
            .anonymous: e(0, 404, 401, 404, 404), .other: e(0, 404, 403, 404, 404),
            .owner: e(0, 404, 403, 404, 404), .member: e(0, 404, 403, 404, 404),
            .admin: e(6, 200, 201, 200, 204),
        ]),
    RuleSetup(
        name: "Poll: @request.body on create, a field names the owner, nobody deletes",
        collection: "Poll", fields: #""title":"t","owner":"OWNER""#, createBody: #"{"owner":"ME"}"#,
        outcomes: [
            .anonymous: e(6, 200, 401, 401, 401), .other: e(6, 200, 201, 403, 403),
            .owner: e(6, 200, 201, 200, 403), .member: e(6, 200, 201, 403, 403),
            .admin: e(6, 200, 201, 200, 204),
        ]),
    // A single read follows `read`, lists follow `list`: where the two differ, both ways.
    RuleSetup(
        name: "Unlisted: read public, list none: open by guid, never enumerated",
        collection: "Unlisted",
        outcomes: [
            .anonymous: e(0, 200, 401, 401, 401), .other: e(0, 200, 201, 403, 403),
            .owner: e(0, 200, 201, 200, 204), .member: e(0, 200, 201, 403, 403),
            .admin: e(6, 200, 201, 200, 204),
        ]),
    RuleSetup(
        name: "Catalogue: list public, read owner-only: listed, but opened only by the owner",
        collection: "Catalogue",
        outcomes: [
            .anonymous: e(6, 404, 401, 404, 404), .other: e(6, 404, 201, 404, 404),
            .owner: e(6, 200, 201, 200, 204), .member: e(6, 404, 201, 404, 404),
            .admin: e(6, 200, 201, 200, 204),
        ]),
]

@Suite("Permission matrix")
struct PermissionMatrixTests {
    @Test("rule setups × roles × operations answer exactly", arguments: ruleSetups)
    func matrix(_ setup: RuleSetup) async throws {
        let world = try await PermissionWorld.make()
        let base = "/ff/resources/\(setup.collection)"
        let creatorGuid = world.guids[setup.creator]!
        var seeded: [String] = []
        for index in 0..<6 {
            let guid = "\(setup.collection.lowercased())\(index)"
            let fields = setup.fields.replacingOccurrences(of: "OWNER", with: creatorGuid)
            let created = try await world.send(
                setup.creator, "POST", base, json: #"{"guid":"\#(guid)",\#(fields)}"#)
            #expect(created.status == 201, "seed: \(created.text)")
            seeded.append(guid)
        }
        let target = seeded[0]
        for role in Role.allCases {
            let expected = setup.outcomes[role]!
            let label = "\(setup.collection) as \(role)"
            let list = try await world.send(role, "GET", base + "?total=true")
            #expect(list.status == 200, "\(label): list")
            #expect(PermissionWorld.guids(list).count == expected.visible, "\(label): list")
            #expect(list.json["total"] as? Int == expected.visible, "\(label): total")
            let random = try await world.send(
                role, "GET", base + "/" + encodeQuery("(guid eq random(guid))") + "?total=true")
            #expect(PermissionWorld.guids(random).count == min(expected.visible, 1), "\(label): random")
            #expect(random.json["total"] as? Int == expected.visible, "\(label): random total")
            let read = try await world.send(role, "GET", "\(base)/\(target)")
            #expect(read.status == expected.read, "\(label): read")
            if expected.read == 404 {
                #expect(read.json["code"] as? String == "not_found", "\(label): read code")
            }
        }
        var updates = 0
        for (position, role) in Role.allCases.enumerated() {
            let expected = setup.outcomes[role]!
            let label = "\(setup.collection) as \(role)"
            let body = setup.createBody.replacingOccurrences(of: "ME", with: world.guids[role] ?? "nobody")
            let create = try await world.send(role, "POST", base, json: body)
            #expect(create.status == expected.create, "\(label): create \(create.text)")
            if create.status == 201 {
                #expect((create.json["createdBy"] as? String) == world.guids[role], "\(label): createdBy")
            }
            let update = try await world.send(
                role, "PATCH", "\(base)/\(target)", json: #"{"n":\#(position)}"#)
            #expect(update.status == expected.update, "\(label): update \(update.text)")
            if update.status == 200 { updates += 1 }
            let me = world.guids[role] ?? "nobody"
            let acl = try await world.send(
                role, "PUT", "\(base)/\(target)/ffACL", json: #"{"readUsers":["*"],"writeUsers":["\#(me)"]}"#)
            #expect(acl.status == expected.update, "\(label): ACL change \(acl.text)")
            if acl.status == 200 {
                updates += 1
                // Back to the collection's rules for the next role.
                let removed = try await world.send(role, "DELETE", "\(base)/\(target)/ffACL")
                #expect(removed.status == 204)
                updates += 1
            }
            let delete = try await world.send(role, "DELETE", "\(base)/\(seeded[position + 1])")
            #expect(delete.status == expected.delete, "\(label): delete \(delete.text)")
        }
        // Refused writes changed nothing: the version counts only the accepted ones.
        let final = try await world.send(.admin, "GET", "\(base)/\(target)")
        #expect(final.json["version"] as? Int == 1 + updates)
        let remaining = try await world.send(.admin, "GET", base + "?total=true")
        let deletes = Role.allCases.filter { setup.outcomes[$0]!.delete == 204 }.count
        let creates = Role.allCases.filter { setup.outcomes[$0]!.create == 201 }.count
        #expect(remaining.json["total"] as? Int == 6 - deletes + creates)
        await world.server.stop()
    }
}
