import Foundation
import RoostCore
import RoostHTTP
import RoostJSON
import Testing

@testable import RoostScripts
@testable import RoostServer

/// FatFractal's `asUserGuid` argument, its counted reads, `deleteAllForQuery` and `resetPassword`.
@Suite("The ff API's acting users, counts, bulk deletes and password resets")
struct ScriptAPIFatFractalTests {
    @Test("a system script acting as a user reads and writes with that user's rights, as anonymous with none")
    func systemActsAsUser() async throws {
        try await ScriptAPIWorld.with { world in
            let alice = try await world.user("alice")
            let bob = try await world.user("bob")
            let diary = try await world.create("Diary", #"{"text":"private"}"#, as: alice)
            let system = world.api(FatFractalScriptAPI.systemPrincipal)
            let url = JSONValue.string("/ff/resources/Diary/\(diary.guid)")
            #expect(try await system.ff("getObjFromUri", url)["text"] == .string("private"))
            #expect(
                try await system.ff("getObjFromUri", url, .string(alice.userGuid))["text"]
                    == .string("private"))
            #expect(try await system.ff("getObjFromUri", url, .string(bob.userGuid)) == .null)
            #expect(try await system.ff("getObjFromUri", url, .string("anonymous")) == .null)
            #expect(
                try await system.ff("getObjFromUri", url, .string("system"))["text"] == .string("private"))
            // Null and empty keep the script's own rights, as FatFractal's default does.
            #expect(try await system.ff("getObjFromUri", url, .null)["text"] == .string("private"))
            #expect(try await system.ff("getObjFromUri", url, .string(""))["text"] == .string("private"))
            // What it creates acting as bob is bob's.
            let created = try await system.ff(
                "createObjAtUri", try json(#"{"text":"bob's"}"#), .string("/Diary"), .string(bob.userGuid))
            #expect(created["createdBy"] == .string(bob.userGuid))
            let refused = await scriptError {
                _ = try await system.ff(
                    "updateObj", try json(#"{"clazz":"Diary","guid":"\#(diary.guid)","text":"x"}"#),
                    .string(bob.userGuid))
            }
            // Bob may not read alice's diary: to him it does not exist.
            #expect(refused?.status == 404)
            let nobody = await scriptError {
                _ = try await system.ff("getObjFromUri", url, .string("no-such-user"))
            }
            #expect(nobody?.code == "invalid_script_argument")
            #expect(nobody?.message.contains("no active user") == true)
            let notText = await scriptError { _ = try await system.ff("getObjFromUri", url, .integer(7)) }
            #expect(notText?.code == "invalid_script_argument")
        }
    }

    @Test("a script with its caller's rights may name only that caller: naming anyone else is 403")
    func callerCannotRaiseRights() async throws {
        try await ScriptAPIWorld.with { world in
            let alice = try await world.user("alice")
            let bob = try await world.user("bob")
            let diary = try await world.create("Diary", #"{"text":"private"}"#, as: alice)
            let url = JSONValue.string("/ff/resources/Diary/\(diary.guid)")
            let asBob = world.api(bob)
            for other in [alice.userGuid, "system", "anonymous"] {
                let error = await scriptError { _ = try await asBob.ff("getObjFromUri", url, .string(other)) }
                #expect(error?.status == 403 && error?.code == "forbidden", "\(other)")
                #expect(error?.message.contains("runAs") == true)
            }
            #expect(try await asBob.ff("getObjFromUri", url, .string(bob.userGuid)) == .null)
            #expect(
                try await world.api(alice).ff("getObjFromUri", url, .string(alice.userGuid))["text"]
                    == .string("private"))
            // An administrator's script with its caller's rights is not the system's.
            let admin = try await world.accounts.createUser(
                userName: "root", email: nil, password: "correct horse battery", admin: true)
            let asAdmin = world.api(Principal(userGuid: admin.guid, tokenId: "t-root", isAdmin: true))
            #expect(try await asAdmin.ff("getObjFromUri", url)["text"] == .string("private"))
            let impersonation = await scriptError {
                _ = try await asAdmin.ff("getObjFromUri", url, .string(alice.userGuid))
            }
            #expect(impersonation?.status == 403)
            let reset = await scriptError {
                _ = try await asAdmin.ff(
                    "resetPassword", .string(alice.userGuid), .string("a new long secret"))
            }
            #expect(reset?.status == 403)
            // Anonymous may name itself.
            #expect(try await world.api(nil).ff("getObjFromUri", url, .string("anonymous")) == .null)
        }
    }

    @Test("getGuids takes at most count; getResultCountForQuery counts what the rights may list")
    func counts() async throws {
        try await ScriptAPIWorld.with { world in
            let alice = try await world.user("alice")
            let bob = try await world.user("bob")
            for index in 0..<5 { _ = try await world.create("Diary", #"{"n":\#(index)}"#, as: alice) }
            _ = try await world.create("Diary", #"{"n":9}"#, as: bob)
            let api = world.api(alice)
            #expect(try await api.ff("getGuids", .string("/Diary"), .integer(3)).array.count == 3)
            #expect(try await api.ff("getGuids", .string("/Diary"), .integer(50)).array.count == 5)
            #expect(try await api.ff("getGuids", .string("/Diary"), .integer(0)).array.isEmpty)
            #expect(try await api.ff("getResultCountForQuery", .string("/Diary")) == .integer(5))
            #expect(try await api.ff("getResultCountForQuery", .string("/Diary/(n gt 2)")) == .integer(2))
            let system = world.api(FatFractalScriptAPI.systemPrincipal)
            #expect(try await system.ff("getResultCountForQuery", .string("/Diary")) == .integer(6))
            #expect(
                try await system.ff("getResultCountForQuery", .string("/Diary"), .string(bob.userGuid))
                    == .integer(1))
            let negative = await scriptError {
                _ = try await api.ff("getGuids", .string("/Diary"), .integer(-1))
            }
            #expect(negative?.code == "invalid_script_argument")
        }
    }

    @Test("deleteAllForQuery deletes what the query names and answers how many; deleteObjAtUri deletes one")
    func bulkDelete() async throws {
        try await ScriptAPIWorld.with { world in
            let alice = try await world.user("alice")
            var guids: [String] = []
            for index in 0..<4 {
                guids.append(try await world.create("Celebrity", #"{"n":\#(index)}"#, as: alice).guid)
            }
            let api = world.api(alice)
            #expect(try await api.ff("deleteAllForQuery", .string("/Celebrity/(n lt 2)")) == .integer(2))
            #expect(try await api.ff("getResultCountForQuery", .string("/Celebrity")) == .integer(2))
            _ = try await api.ff("deleteObjAtUri", .string("/ff/resources/Celebrity/\(guids[3])"))
            #expect(try await api.ff("getAllGuids", .string("/Celebrity")) == .array([.string(guids[2])]))
            let users = await scriptError {
                _ = try await world.api(FatFractalScriptAPI.systemPrincipal).ff(
                    "deleteAllForQuery", .string("/FFUser"))
            }
            #expect(users?.status == 403)
        }
    }

    @Test("deleteAllForQuery over its limit deletes nothing")
    func bulkDeleteLimit() async throws {
        try await ScriptAPIWorld.with { world in
            let alice = try await world.user("alice")
            for index in 0..<3 { _ = try await world.create("Celebrity", #"{"n":\#(index)}"#, as: alice) }
            var limits = FatFractalScriptAPI.Limits()
            limits.maxArrayObjects = 2
            let error = await scriptError {
                _ = try await world.api(alice, limits: limits).ff("deleteAllForQuery", .string("/Celebrity"))
            }
            #expect(error?.code == "script_result_too_large")
            #expect(
                try await world.api(alice).ff("getResultCountForQuery", .string("/Celebrity")) == .integer(3))
        }
    }

    @Test("resetPassword sets a user's password and ends their sessions, with system rights only")
    func resetPassword() async throws {
        try await ScriptAPIWorld.with { world in
            let alice = try await world.user("alice")
            let bob = try await world.user("bob")
            let denied = await scriptError {
                _ = try await world.api(bob).ff(
                    "resetPassword", .string(alice.userGuid), .string("a new long secret"))
            }
            #expect(denied?.status == 403)
            let system = world.api(FatFractalScriptAPI.systemPrincipal)
            let weak = await scriptError {
                _ = try await system.ff("resetPassword", .string(alice.userGuid), .string("short"))
            }
            #expect(weak?.status == 400)
            _ = try await system.ff("resetPassword", .string(alice.userGuid), .string("a new long secret"))
            let device = DeviceInfo(id: "test")
            _ = try await world.accounts.login(
                identifier: "alice", password: "a new long secret", device: device, address: "127.0.0.1",
                client: "127.0.0.1")
            let old = await scriptError {
                _ = try await world.accounts.login(
                    identifier: "alice", password: "correct horse battery", device: device,
                    address: "127.0.0.1", client: "127.0.0.1")
            }
            #expect(old?.status == 401)
            let missing = await scriptError {
                _ = try await system.ff(
                    "resetPassword", .string("no-such-guid"), .string("a new long secret"))
            }
            #expect(missing?.status == 404)
        }
    }
}
