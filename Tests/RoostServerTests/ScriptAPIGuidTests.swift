import Foundation
import RoostCore
import RoostJSON
import Testing

@testable import RoostScripts
@testable import RoostServer

/// Script helpers that take a guid take only a guid: a query or a path spliced into one is
/// refused with `invalid_guid`, never run.
@Suite("The ff API's guid arguments")
struct ScriptAPIGuidTests {
    static let hostile = ["(email matches '^a')", "a/b", "x(userName eq 'alice')", "", "a b", "../FFUser"]

    @Test("getUser and getGroup read one object by guid and refuse anything else with invalid_guid")
    func userAndGroupTakeGuids() async throws {
        try await ScriptAPIWorld.with { world in
            let alice = try await world.user("alice")
            let system = world.api(FatFractalScriptAPI.systemPrincipal)
            #expect(try await system.ff("getUser", .string(alice.userGuid))["userName"] == .string("alice"))
            #expect(try await system.ff("getUser", .string("no-such-user")) == .null)
            #expect(try await system.ff("getGroup", .string("no-such-group")) == .null)
            for method in ["getUser", "getGroup"] {
                for guid in Self.hostile {
                    let error = await scriptError { _ = try await system.ff(method, .string(guid)) }
                    #expect(error?.status == 400 && error?.code == "invalid_guid", "\(method)(\(guid))")
                    // With an acting user too: the guid is checked whoever the call acts as.
                    let acting = await scriptError {
                        _ = try await system.ff(method, .string(guid), .string("anonymous"))
                    }
                    #expect(acting?.code == "invalid_guid", "\(method)(\(guid), anonymous)")
                }
                let notText = await scriptError { _ = try await system.ff(method, .integer(7)) }
                #expect(notText?.code == "invalid_guid")
            }
        }
    }

    @Test("resetPassword, asUserGuid and an object's clazz and guid refuse a guid that is not one")
    func everyGuidArgumentIsChecked() async throws {
        try await ScriptAPIWorld.with { world in
            let alice = try await world.user("alice")
            let system = world.api(FatFractalScriptAPI.systemPrincipal)
            let query = "x(userName eq 'alice')"
            let calls: [(String, [JSONValue])] = [
                ("resetPassword", [.string("(userName eq 'alice')"), .string("a new long secret")]),
                ("getObjFromUri", [.string("/FFUser/\(alice.userGuid)"), .string("(userName eq 'alice')")]),
                ("updateObj", [try json(#"{"clazz":"Diary","guid":"(text eq 'x')","text":"y"}"#)]),
                ("deleteObj", [try json(#"{"clazz":"FFUser","guid":"(userName eq 'alice')"}"#)]),
            ]
            for (method, arguments) in calls {
                let error = await scriptError { _ = try await system.call(method, arguments: arguments) }
                #expect(error?.status == 400 && error?.code == "invalid_guid", "\(method) \(arguments)")
            }
            // In a URL, text after the collection that is not a query is a guid: a malformed one is
            // no object, as GET /C/<it> is 404.
            #expect(try await system.ff("getObjFromUri", .string("/ff/resources/FFUser/\(query)")) == .null)
            let deleted = await scriptError {
                _ = try await system.ff("deleteObjAtUri", .string("/FFUser/\(query)"))
            }
            #expect(deleted?.status == 404)
            // Alice is still there.
            #expect(try await system.ff("getUser", .string(alice.userGuid))["userName"] == .string("alice"))
        }
    }

    @Test("getReferredObject reads only the one object a reference names, never a query")
    func referredObjectIsOneObject() async throws {
        try await ScriptAPIWorld.with { world in
            let alice = try await world.user("alice")
            let system = world.api(FatFractalScriptAPI.systemPrincipal)
            #expect(
                try await system.ff("getReferredObject", .string("/ff/resources/FFUser/\(alice.userGuid)"))[
                    "userName"] == .string("alice"))
            for url in [
                "/ff/resources/FFUser/(userName eq 'alice')", "/ff/resources/FFUser",
                "/FFUser/(guid eq 'x')/y",
            ] {
                let error = await scriptError { _ = try await system.ff("getReferredObject", .string(url)) }
                #expect(error?.status == 400 && error?.code == "invalid_script_argument", "\(url)")
            }
        }
    }
}
