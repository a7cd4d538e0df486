import Foundation
import RoostCore
import RoostJSON
import Testing

@testable import RoostScripts
@testable import RoostServer

@Suite("The ff API's writes, for scripts")
struct ScriptAPIWriteTests {
    @Test(
        "createObjAtUrl keeps the guid an object carries and drops its other metadata (hoodyoodoo's TopCelebrity)"
    )
    func copyKeepsGuid() async throws {
        try await ScriptAPIWorld.with { world in
            let alice = try await world.user("alice")
            let celebrity = try await world.create(
                "Celebrity", #"{"firstName":"Ada","selectedCount":3}"#, as: alice)
            let api = world.api(alice)
            let read = try await api.ff("getObjFromUrl", .string("/ff/resources/Celebrity/\(celebrity.guid)"))
            let top = try await api.ff("createObjAtUrl", read, .string("/TopCelebrity"))
            #expect(top["guid"] == .string(celebrity.guid))
            #expect(top["ffUrl"] == .string("/ff/resources/TopCelebrity/\(celebrity.guid)"))
            #expect(top["version"] == .number("1"))
            #expect(top["selectedCount"] == .number("3"))
            #expect(top["createdBy"] == .string(alice.userGuid))
            #expect(top["ffRL"] == .string("/TopCelebrity"))
            // The class the copy came with stays, as the dialect stores a client's clazz.
            #expect(top["clazz"] == .string("Celebrity"))
            let stored = try await world.objects.object(in: "TopCelebrity", guid: celebrity.guid, caller: nil)
            let text = String(decoding: stored.document, as: UTF8.self)
            for dropped in ["ffRL", "ffRefs", "ffUserCanEdit"] {
                #expect(!text.contains(dropped), "\(dropped)")
            }
        }
    }

    @Test(
        "createObjAtUri makes a fresh guid for guid: null, takes ffRefs as references, and answers the created object"
    )
    func createsFresh() async throws {
        try await ScriptAPIWorld.with { world in
            let alice = try await world.user("alice")
            let celebrity = try await world.create("Celebrity", #"{"firstName":"Ada"}"#, as: alice)
            let body = try json(
                #"{"clazz":"Diary","guid":null,"ffUrl":"1000000","text":"hi","ffRefs":[{"name":"about","type":"FFO","url":"/ff/resources/Celebrity/\#(celebrity.guid)"}]}"#
            )
            let created = try await world.api(alice).ff(
                "createObjAtUri", body, .string("/ff/resources/Diary"))
            let guid = try #require(created["guid"]?.stringValue)
            #expect(guid != "1000000")
            #expect(
                created["ffRefs"]
                    == .array([
                        try json(
                            #"{"name":"about","type":"FFO","url":"/ff/resources/Celebrity/\#(celebrity.guid)"}"#
                        )
                    ]))
            let stored = try await world.objects.object(in: "Diary", guid: guid, caller: alice)
            #expect(
                String(decoding: stored.document, as: UTF8.self).contains(
                    #""about":{"ffUrl":"/ff/resources/Celebrity/\#(celebrity.guid)"}"#))
        }
    }

    @Test("creates are refused as the rules and the API would refuse them")
    func createRefusals() async throws {
        try await ScriptAPIWorld.with { world in
            let alice = try await world.user("alice")
            let anonymous = await scriptError {
                _ = try await world.api(nil).ff("createObjAtUrl", try json(#"{"a":1}"#), .string("/Diary"))
            }
            #expect(anonymous?.status == 401)
            let atObject = await scriptError {
                _ = try await world.api(alice).ff(
                    "createObjAtUrl", try json(#"{"a":1}"#), .string("/Diary/g1"))
            }
            #expect(atObject?.code == "invalid_script_argument")
            let user = await scriptError {
                _ = try await world.api(FatFractalScriptAPI.systemPrincipal).ff(
                    "createObjAtUrl", try json(#"{"userName":"x"}"#), .string("/FFUser"))
            }
            #expect(user?.status == 403)
            #expect(user?.message.contains("registerUser") == true)
            let badGuid = await scriptError {
                _ = try await world.api(alice).ff(
                    "createObjAtUrl", try json(#"{"guid":"no spaces"}"#), .string("/Diary"))
            }
            #expect(badGuid?.code == "invalid_guid")
            var limits = FatFractalScriptAPI.Limits()
            limits.maxObjectBytes = 100
            let big = await scriptError {
                _ = try await world.api(alice, limits: limits).ff(
                    "createObjAtUrl",
                    .object(JSONObject(uniqueMembers: [("t", .string(String(repeating: "x", count: 200)))])),
                    .string("/Diary"))
            }
            #expect(big?.code == "invalid_script_argument")
            #expect(big?.message.contains("100-byte limit") == true)
            // Each blob copied costs reads and a claim: 32 per create at most, refused before any.
            let refs = (0...ObjectService.maximumBlobCopies).map { index in
                #"{"name":"b\#(index)","type":"FFB","url":"/ff/resources/Celebrity/g\#(index)/photo"}"#
            }
            let manyBlobs = await scriptError {
                _ = try await world.api(alice).ff(
                    "createObjAtUrl", try json(#"{"ffRefs":[\#(refs.joined(separator: ","))]}"#),
                    .string("/Diary"))
            }
            #expect(manyBlobs?.code == "invalid_field")
            #expect(manyBlobs?.message == "An object copies at most 32 blob members, not 33.")
        }
    }

    @Test("updateObj replaces the whole object by its ffUrl or clazz and guid, ignoring stale metadata")
    func update() async throws {
        try await ScriptAPIWorld.with { world in
            let alice = try await world.user("alice")
            let api = world.api(alice)
            let celebrity = try await world.create(
                "Celebrity", #"{"firstName":"Ada","lastName":"L"}"#, as: alice)
            let stale = try await api.ff("getObjFromUrl", .string("/Celebrity/\(celebrity.guid)"))
            var first = try #require(stale.objectValue)
            first["selectedCount"] = .number("1")
            let once = try await api.ff("updateObj", .object(first))
            #expect(once["version"] == .number("2"))
            var second = try #require(stale.objectValue)  // still version 1, as a script may hold it
            second["lastName"] = nil
            second["selectedCount"] = .number("2")
            let twice = try await api.ff("updateObj", .object(second))
            #expect(twice["version"] == .number("3"))
            #expect(twice["lastName"] == nil)
            #expect(twice["selectedCount"] == .number("2"))
            let byClass = try await api.ff(
                "updateObj", try json(#"{"clazz":"Celebrity","guid":"\#(celebrity.guid)","firstName":"Bo"}"#))
            #expect(byClass["firstName"] == .string("Bo"))
            #expect(byClass["version"] == .number("4"))
            let missing = await scriptError {
                _ = try await api.ff(
                    "updateObj", try json(#"{"ffUrl":"/ff/resources/Celebrity/nope","a":1}"#))
            }
            #expect(missing?.status == 404)
        }
    }

    @Test(
        "updates and deletes follow the rights: anonymous is refused, another user gets 404 for a private object, system may"
    )
    func writeRights() async throws {
        try await ScriptAPIWorld.with { world in
            let alice = try await world.user("alice")
            let bob = try await world.user("bob")
            let diary = try await world.create("Diary", #"{"text":"mine"}"#, as: alice)
            let body = try json(#"{"ffUrl":"/ff/resources/Diary/\#(diary.guid)","text":"theirs"}"#)
            #expect(await scriptError { _ = try await world.api(nil).ff("updateObj", body) }?.status == 404)
            #expect(await scriptError { _ = try await world.api(bob).ff("updateObj", body) }?.status == 404)
            #expect(await scriptError { _ = try await world.api(bob).ff("deleteObj", body) }?.status == 404)
            let system = world.api(FatFractalScriptAPI.systemPrincipal)
            #expect(try await system.ff("updateObj", body)["text"] == .string("theirs"))
            #expect(try await system.ff("updateObj", body)["updatedBy"] == .string("system"))
        }
    }

    @Test(
        "a system script activates a user with updateObj (FatFractal's UserActivation); a caller's script may not"
    )
    func activateUser() async throws {
        try await ScriptAPIWorld.with { world in
            let waiting = try await world.api(nil).ff(
                "registerUser", try json(#"{"userName":"ivy"}"#), .string("ivy's long password"), .bool(false)
            )
            var user = try #require(waiting.objectValue)
            user["active"] = .bool(true)
            let guid = try #require(user["guid"]?.stringValue)
            let ivy = Principal(userGuid: guid, tokenId: "t")
            let refused = await scriptError { _ = try await world.api(ivy).ff("updateObj", .object(user)) }
            #expect(refused?.status == 403)
            let activated = try await world.api(FatFractalScriptAPI.systemPrincipal).ff(
                "updateObj", .object(user))
            #expect(activated["active"] == .bool(true))
            _ = try await world.accounts.login(
                identifier: "ivy", password: "ivy's long password", device: DeviceInfo(), address: "t",
                client: "t")
        }
    }

    @Test("deleteObj takes the object or its URL, answers null, and the object is gone")
    func delete() async throws {
        try await ScriptAPIWorld.with { world in
            let alice = try await world.user("alice")
            let api = world.api(alice)
            let first = try await world.create("Celebrity", #"{"n":1}"#, as: alice)
            let second = try await world.create("Celebrity", #"{"n":2}"#, as: alice)
            let object = try await api.ff("getObjFromUrl", .string("/Celebrity/\(first.guid)"))
            #expect(try await api.ff("deleteObj", object) == .null)
            #expect(try await api.ff("deleteObj", .string("/ff/resources/Celebrity/\(second.guid)")) == .null)
            #expect(try await api.ff("getArrayFromUrl", .string("/Celebrity")) == .array([]))
            let again = await scriptError { _ = try await api.ff("deleteObj", object) }
            #expect(again?.status == 404)
            let collection = await scriptError { _ = try await api.ff("deleteObj", .string("/Celebrity")) }
            #expect(collection?.code == "invalid_script_argument")
        }
    }

    @Test("deleting an FFUser deletes the account, with system rights only")
    func deleteUser() async throws {
        try await ScriptAPIWorld.with { world in
            let alice = try await world.user("alice")
            let url = JSONValue.string("/FFUser/\(alice.userGuid)")
            let refused = await scriptError { _ = try await world.api(alice).ff("deleteObj", url) }
            #expect(refused?.status == 403)
            let system = world.api(FatFractalScriptAPI.systemPrincipal)
            #expect(try await system.ff("deleteObj", url) == .null)
            #expect(try await system.ff("getObjFromUrl", url) == .null)
            let login = await scriptError {
                _ = try await world.accounts.login(
                    identifier: "alice", password: "correct horse battery", device: DeviceInfo(),
                    address: "t", client: "t"
                )
            }
            #expect(login?.code == "invalid_credentials")
        }
    }

    @Test("registerUser makes an account that can log in, and answers its FFUser without the password")
    func registerUser() async throws {
        try await ScriptAPIWorld.with { world in
            let user = try await world.api(nil).ff(
                "registerUser",
                try json(#"{"clazz":"FFUser","userName":"carol","email":"c@example.test","firstName":"C"}"#),
                .string("carol's long password"), .bool(true), .bool(false))
            #expect(user["clazz"] == .string("FFUser"))
            #expect(user["userName"] == .string("carol"))
            #expect(user["firstName"] == .string("C"))
            #expect(user["active"] == .bool(true))
            #expect(!JSONWriter.string(user).contains("password"))
            let login = try await world.accounts.login(
                identifier: "carol", password: "carol's long password", device: DeviceInfo(), address: "t",
                client: "t")
            #expect(login.user.guid == user["guid"]?.stringValue)

            let waiting = try await world.api(nil).ff(
                "registerUser", try json(#"{"userName":"dan"}"#), .string("dan's long password"), .bool(false)
            )
            #expect(waiting["active"] == .bool(false))

            let weak = await scriptError {
                _ = try await world.api(nil).ff(
                    "registerUser", try json(#"{"userName":"erin"}"#), .string("x"))
            }
            #expect(weak?.code == "weak_password")
            let taken = await scriptError {
                _ = try await world.api(nil).ff(
                    "registerUser", try json(#"{"userName":"carol"}"#), .string("another long password"))
            }
            #expect(taken?.status == 409)
            let mail = await scriptError {
                _ = try await world.api(nil).ff(
                    "registerUser", try json(#"{"userName":"fay"}"#), .string("fay's long password"),
                    .bool(true), .bool(true))
            }
            #expect(mail?.code == "not_configured")
            let password = await scriptError {
                _ = try await world.api(nil).ff(
                    "registerUser", try json(#"{"userName":"gus"}"#), .number("1"))
            }
            #expect(password?.code == "invalid_script_argument")
        }
    }

    @Test("with registration closed, registerUser needs system rights")
    func registrationClosed() async throws {
        let closed = #"{"settings": {"registration": "closed"}}"#
        try await ScriptAPIWorld.with(definition: closed) { world in
            let refused = await scriptError {
                _ = try await world.api(nil).ff(
                    "registerUser", try json(#"{"userName":"hal"}"#), .string("hal's long password"))
            }
            #expect(refused?.code == "registration_closed")
            let made = try await world.api(FatFractalScriptAPI.systemPrincipal).ff(
                "registerUser", try json(#"{"userName":"hal"}"#), .string("hal's long password"))
            #expect(made["userName"] == .string("hal"))
        }
    }
}
