import Foundation
import RoostCore
import RoostSQLite
import RoostStore
import RoostTestSupport
import Testing

/// Issue 13, item 3: a group that rules or access lists trust cannot be claimed by whoever comes
/// first, by any way in.
@Suite("Group squatting")
struct GroupSquattingTests {
    /// `Payroll` trusts the declared group `hr`, whose manager is carol.
    private static func payrollDefinition(manager: String) -> String {
        #"""
        {
          "groups": {"hr": {"groupName": "Human resources", "managers": ["\#(manager)"]}},
          "collections": {
            "Payroll": {"rules": {"read": "@user.groups contains_any 'hr'",
                                  "update": "@user.groups contains_any 'hr'"}}
          }
        }
        """#
    }

    private static func reference(_ guid: String) -> String { #"{"ffUrl":"/ff/resources/FFUser/\#(guid)"}"# }

    @Test("only an admin chooses a group's guid")
    func chosenGuids() async throws {
        let world = try await PermissionWorld.make()
        let bob = world.guids[.other]!
        let claim = try await world.send(
            .other, "POST", "/ff/resources/FFUserGroup",
            json: #"{"guid":"auditors","users":[\#(Self.reference(bob))]}"#)
        #expect(claim.status == 403)
        #expect(claim.json["code"] as? String == "group_guid_not_allowed")
        #expect(try await world.send(.admin, "GET", "/ff/resources/FFUserGroup/auditors").status == 404)
        // Echoing a guid as a field of the body is the same claim.
        let anonymous = try await world.send(
            .anonymous, "POST", "/ff/resources/FFUserGroup", json: #"{"guid":"auditors"}"#)
        #expect(anonymous.status == 403)
        let own = try await world.send(
            .other, "POST", "/ff/resources/FFUserGroup", json: #"{"users":[\#(Self.reference(bob))]}"#)
        #expect(own.status == 201)
        let admin = try await world.send(
            .admin, "POST", "/ff/resources/FFUserGroup", json: #"{"guid":"auditors"}"#)
        #expect(admin.status == 201)
        await world.server.stop()
    }

    @Test("a deleted group's guid is never a group again, and what named it stays closed")
    func retiredGuids() async throws {
        let world = try await PermissionWorld.make()
        let bob = world.guids[.other]!
        let created = try await world.send(
            .owner, "POST", "/ff/resources/FFUserGroup", json: #"{"users":[]}"#)
        let group = try #require(created.json["guid"] as? String)
        let note = try await world.send(.owner, "POST", "/ff/resources/Diary", json: #"{"text":"minutes"}"#)
        let noteGuid = try #require(note.json["guid"] as? String)
        let acl = try await world.send(
            .owner, "PUT", "/ff/resources/Diary/\(noteGuid)/ffACL", json: #"{"readGroups":["\#(group)"]}"#)
        #expect(acl.status == 200)
        #expect(try await world.send(.owner, "DELETE", "/ff/resources/FFUserGroup/\(group)").status == 204)
        let squat = #"{"guid":"\#(group)","users":[\#(Self.reference(bob))]}"#
        let byBob = try await world.send(.other, "POST", "/ff/resources/FFUserGroup", json: squat)
        #expect(byBob.status == 403)
        #expect(byBob.json["code"] as? String == "group_guid_not_allowed")
        let byOwner = try await world.send(.owner, "POST", "/ff/resources/FFUserGroup", json: squat)
        #expect(byOwner.status == 403)
        let byAdmin = try await world.send(.admin, "POST", "/ff/resources/FFUserGroup", json: squat)
        #expect(byAdmin.status == 409)
        #expect(byAdmin.json["code"] as? String == "group_guid_retired")
        // PUT does not create: the guid stays free of members.
        let put = try await world.send(.other, "PUT", "/ff/resources/FFUserGroup/\(group)", json: squat)
        #expect(put.status == 404)
        #expect(try await world.send(.other, "GET", "/ff/resources/Diary/\(noteGuid)").status == 404)
        await world.server.stop()
    }

    @Test("declared groups: created at start, changed only by admins and their managers")
    func declaredGroups() async throws {
        let world = try await PermissionWorld.make()
        let (bob, carol) = (world.guids[.other]!, world.guids[.member]!)
        try await world.apply(Self.payrollDefinition(manager: carol))
        let hr = try await world.send(.other, "GET", "/ff/resources/FFUserGroup/hr")
        #expect(hr.status == 200)
        #expect(hr.json["createdBy"] is NSNull)
        #expect(hr.json["groupName"] as? String == "Human resources")
        #expect((hr.json["users"] as? [Any])?.isEmpty == true)
        let payroll = try await world.send(.admin, "POST", "/ff/resources/Payroll", json: #"{"salary":5000}"#)
        let slip = "/ff/resources/Payroll/" + (payroll.json["guid"] as? String ?? "")

        // Every way in for bob: claim the guid, patch or replace the members, set its ACL, delete it.
        let join = #"{"users":[\#(Self.reference(bob))]}"#
        let claim = try await world.send(.other, "POST", "/ff/resources/FFUserGroup", json: #"{"guid":"hr"}"#)
        #expect(claim.status == 403)
        let patch = try await world.send(.other, "PATCH", "/ff/resources/FFUserGroup/hr", json: join)
        #expect(patch.status == 403)
        let details = patch.json["details"] as? [String: Any]
        #expect(details?["collection"] as? String == "FFUserGroup")
        #expect(details?["operation"] as? String == "update")
        #expect((details?["rule"] as? String)?.hasPrefix("declared in the app definition") == true)
        #expect(try await world.send(.other, "PUT", "/ff/resources/FFUserGroup/hr", json: join).status == 403)
        let acl = try await world.send(
            .other, "PUT", "/ff/resources/FFUserGroup/hr/ffACL", json: #"{"writeUsers":["*"]}"#)
        #expect(acl.status == 403)
        #expect(try await world.send(.other, "DELETE", "/ff/resources/FFUserGroup/hr").status == 403)
        #expect(try await world.send(.other, "GET", slip).status == 404)
        #expect(PermissionWorld.guids(try await world.send(.other, "GET", "/ff/resources/Payroll")).isEmpty)

        // The manager adds bob; then the rule that trusts the group lets him in.
        #expect(
            try await world.send(.member, "PATCH", "/ff/resources/FFUserGroup/hr", json: join).status == 200)
        #expect(try await world.send(.other, "GET", slip).status == 200)
        #expect(
            try await world.send(.other, "PATCH", slip, json: #"{"salary":6000}"#).status == 200)
        // Managers change members; only admins delete. A deleted declared group comes back empty.
        #expect(try await world.send(.member, "DELETE", "/ff/resources/FFUserGroup/hr").status == 403)
        #expect(try await world.send(.admin, "DELETE", "/ff/resources/FFUserGroup/hr").status == 204)
        #expect(try await world.send(.other, "GET", slip).status == 404)
        try await world.apply(Self.payrollDefinition(manager: carol))
        let back = try await world.send(.other, "GET", "/ff/resources/FFUserGroup/hr")
        #expect((back.json["users"] as? [Any])?.isEmpty == true)
        #expect(try await world.send(.other, "GET", slip).status == 404)
        await world.server.stop()
    }

    @Test("declaring a group takes it from a user who claimed it first, not from an admin")
    func declaringTakesSquattedGroups() async throws {
        let world = try await PermissionWorld.make()
        let (bob, carol) = (world.guids[.other]!, world.guids[.member]!)
        // What anyone could do before this release: bob claims `hr` with himself as a member.
        let objects = SQLiteObjectStore(
            database: try SQLiteDatabase(
                path: world.server.dataDirectory + "/roost.sqlite", migrations: SQLiteStorage.migrations),
            collections: .builtIn)
        let document =
            #"{"guid":"hr","ffUrl":"/ff/resources/FFUserGroup/hr","createdBy":"\#(bob)","createdAt":1,"updatedBy":"\#(bob)","updatedAt":1,"version":1,"users":["\#(bob)"]}"#
        try await objects.insert(
            StoredObject(
                collection: "FFUserGroup", guid: "hr", document: Array(document.utf8), createdBy: bob,
                createdAt: 1, updatedBy: bob, updatedAt: 1, version: 1,
                acl: Array(
                    #"{"readUsers":[],"readGroups":[],"writeUsers":["\#(bob)"],"writeGroups":[]}"#.utf8)))
        // An administrator's group keeps its members when the app declares it.
        let ops = try await world.send(
            .admin, "POST", "/ff/resources/FFUserGroup", json: #"{"guid":"ops","users":["\#(carol)"]}"#)
        #expect(ops.status == 201)
        let definition = Self.payrollDefinition(manager: carol).replacingOccurrences(
            of: #""groups": {"#, with: #""groups": {"ops": {}, "#)
        #expect(definition.contains(#""ops": {}"#))
        try await world.apply(definition)
        let hr = try await world.send(.other, "GET", "/ff/resources/FFUserGroup/hr")
        #expect(hr.json["createdBy"] is NSNull)
        #expect((hr.json["users"] as? [Any])?.isEmpty == true)
        let payroll = try await world.send(.admin, "POST", "/ff/resources/Payroll", json: #"{"salary":1}"#)
        let slip = "/ff/resources/Payroll/" + (payroll.json["guid"] as? String ?? "")
        #expect(try await world.send(.other, "GET", slip).status == 404)
        let rejoin = try await world.send(
            .other, "PATCH", "/ff/resources/FFUserGroup/hr", json: #"{"users":["\#(bob)"]}"#)
        #expect(rejoin.status == 403, "\(rejoin.text)")
        let kept = try await world.send(.admin, "GET", "/ff/resources/FFUserGroup/ops")
        #expect(kept.json["users"] as? [String] == [carol])
        await world.server.stop()
    }

    @Test("groups the definition declares are checked when it loads")
    func definitionErrors() throws {
        let cases: [(String, String)] = [
            (#"{"groups":{"not a guid":{}}}"#, "groups.not a guid"),
            (#"{"groups":{"hr":{"members":[]}}}"#, "groups.hr.members"),
            (#"{"groups":{"hr":{"managers":["a@b.c"]}}}"#, "groups.hr.managers"),
            (#"{"groups":["hr"]}"#, "groups"),
        ]
        for (text, field) in cases {
            #expect(throws: AppDefinitionError.self) { try AppDefinition.parse(Array(text.utf8)) }
            do {
                _ = try AppDefinition.parse(Array(text.utf8))
            } catch {
                #expect(error.field == field, "\(text): \(error)")
            }
        }
        let parsed = try AppDefinition.parse(Array(#"{"groups":{"hr":{"managers":["u1"]},"ops":{}}}"#.utf8))
        #expect(parsed.groups["hr"] == AppDefinition.DeclaredGroup(groupName: "hr", managers: ["u1"]))
        #expect(parsed.groups["ops"]?.managers == [])
    }
}
