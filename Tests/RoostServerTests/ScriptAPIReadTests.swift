import Foundation
import RoostCore
import RoostJSON
import Testing

@testable import RoostScripts
@testable import RoostServer

@Suite("The ff API's reads, for scripts")
struct ScriptAPIReadTests {
    @Test("getObjFromUrl takes every spelling of an object's URL and answers FatFractal's wire shape")
    func objectSpellings() async throws {
        try await ScriptAPIWorld.with { world in
            let alice = try await world.user("alice")
            let celebrity = try await world.create("Celebrity", #"{"firstName":"Ada"}"#, as: alice)
            let api = world.api(alice)
            for url in [
                "/ff/resources/Celebrity/\(celebrity.guid)", "/Celebrity/\(celebrity.guid)",
                "Celebrity/\(celebrity.guid)",
                "https://example.test/app/ff/resources/Celebrity/\(celebrity.guid)",
                "/app/ff/resources/Celebrity/\(celebrity.guid)",
                "http://other:8080/ff/resources/Celebrity/\(celebrity.guid)",
            ] {
                for method in ["getObjFromUrl", "getObjFromUri"] {
                    let object = try await api.ff(method, .string(url))
                    #expect(object["firstName"] == .string("Ada"), "\(method) \(url)")
                    #expect(object["clazz"] == .string("Celebrity"))
                    #expect(object["ffUrl"] == .string("/ff/resources/Celebrity/\(celebrity.guid)"))
                    #expect(object["ffRL"] == .string("/Celebrity"))
                    #expect(object["ffRefs"] == .array([]))
                    #expect(object["ffUserCanEdit"] == .bool(true))
                }
            }
        }
    }

    @Test("a missing object, a malformed guid and one the rights may not read are all null")
    func nullWhenAbsentOrHidden() async throws {
        try await ScriptAPIWorld.with { world in
            let alice = try await world.user("alice")
            let bob = try await world.user("bob")
            let diary = try await world.create("Diary", #"{"text":"secret"}"#, as: alice)
            let url = JSONValue.string("/ff/resources/Diary/\(diary.guid)")
            #expect(try await world.api(alice).ff("getObjFromUrl", url)["text"] == .string("secret"))
            #expect(try await world.api(nil).ff("getObjFromUrl", url) == .null)
            #expect(try await world.api(bob).ff("getObjFromUrl", url) == .null)
            #expect(try await world.api(alice).ff("getObjFromUrl", .string("/Diary/nope")) == .null)
            #expect(try await world.api(alice).ff("getObjFromUrl", .string("/Diary/bad%20guid!")) == .null)
            let system = world.api(FatFractalScriptAPI.systemPrincipal)
            #expect(try await system.ff("getObjFromUrl", url)["text"] == .string("secret"))
        }
    }

    @Test("getObjFromUri with a query answers its first match, or null")
    func objectByQuery() async throws {
        try await ScriptAPIWorld.with { world in
            let alice = try await world.user("alice")
            _ = try await world.create("Celebrity", #"{"firstName":"Ada","n":1}"#, as: alice)
            _ = try await world.create("Celebrity", #"{"firstName":"Ada","n":2}"#, as: alice)
            let api = world.api(nil)
            #expect(
                try await api.ff("getObjFromUri", .string("/Celebrity/(firstName eq 'Ada')"))["n"]
                    == .number("1"))
            #expect(try await api.ff("getObjFromUri", .string("/Celebrity/(firstName eq 'Bo')")) == .null)
            #expect(try await api.ff("getObjFromUri", .string("/Celebrity"))["n"] == .number("1"))
        }
    }

    @Test("getArrayFromUrl takes a URL or an array of one, with queries, and lists only what the rights may")
    func arrays() async throws {
        try await ScriptAPIWorld.with { world in
            let alice = try await world.user("alice")
            let bob = try await world.user("bob")
            for n in 1...3 { _ = try await world.create("Diary", #"{"n":\#(n)}"#, as: alice) }
            _ = try await world.create("Diary", #"{"n":9}"#, as: bob)
            let all = JSONValue.string("/ff/resources/Diary")
            #expect(try await world.api(alice).ff("getArrayFromUrl", all).array.count == 3)
            #expect(try await world.api(bob).ff("getArrayFromUrl", .array([all])).array.count == 1)
            #expect(try await world.api(nil).ff("getArrayFromUri", all) == .array([]))
            #expect(
                try await world.api(FatFractalScriptAPI.systemPrincipal).ff("getArrayFromUri", all).array
                    .count == 4)
            let query = try await world.api(alice).ff(
                "getArrayFromUrl", .string("/Diary/(createdBy eq '\(alice.userGuid)' and n gte 2)"))
            #expect(query.array.map { $0["n"] } == [.number("2"), .number("3")])
            let one = try await world.api(alice).ff(
                "getArrayFromUrl", .string("Diary/\(world.objectsGuid(query, 0))"))
            #expect(one.array.count == 1)
            #expect(
                try await world.api(bob).ff(
                    "getArrayFromUrl", .string("Diary/\(world.objectsGuid(query, 0))")) == .array([]))
        }
    }

    @Test("a random pick draws one object even when the reads are paged")
    func randomPick() async throws {
        try await ScriptAPIWorld.with { world in
            let alice = try await world.user("alice")
            for n in 1...5 { _ = try await world.create("Celebrity", #"{"n":\#(n)}"#, as: alice) }
            var limits = FatFractalScriptAPI.Limits()
            limits.pageSize = 1
            let picked = try await world.api(nil, limits: limits).ff(
                "getArrayFromUrl", .string("/ff/resources/Celebrity/(guid eq random(guid))"))
            #expect(picked.array.count == 1)
        }
    }

    @Test("getArrayFromUrl reads page after page up to its cap, and refuses past it")
    func arrayCap() async throws {
        try await ScriptAPIWorld.with { world in
            let alice = try await world.user("alice")
            for n in 1...4 { _ = try await world.create("Celebrity", #"{"n":\#(n)}"#, as: alice) }
            var limits = FatFractalScriptAPI.Limits()
            limits.pageSize = 2
            limits.maxArrayObjects = 4
            let four = try await world.api(alice, limits: limits).ff("getArrayFromUrl", .string("/Celebrity"))
            #expect(four.array.map { $0["n"] } == (1...4).map { .number(String($0)) })
            limits.maxArrayObjects = 3
            let error = await scriptError {
                _ = try await world.api(alice, limits: limits).ff("getArrayFromUrl", .string("/Celebrity"))
            }
            #expect(error?.status == 400)
            #expect(error?.code == "script_result_too_large")
            #expect(error?.message.contains("more than 3 objects") == true)
            limits.maxArrayObjects = 10
            limits.maxResultBytes = 300
            let bytes = await scriptError {
                _ = try await world.api(alice, limits: limits).ff("getArrayFromUrl", .string("/Celebrity"))
            }
            #expect(bytes?.code == "script_result_too_large")
        }
    }

    @Test("getAllGuids answers the guids the rights may list, capped")
    func allGuids() async throws {
        try await ScriptAPIWorld.with { world in
            let alice = try await world.user("alice")
            let bob = try await world.user("bob")
            var made: [String] = []
            for n in 1...3 { made.append(try await world.create("Diary", #"{"n":\#(n)}"#, as: alice).guid) }
            #expect(
                try await world.api(alice).ff("getAllGuids", .string("/Diary"))
                    == .array(made.map(JSONValue.string)))
            #expect(try await world.api(bob).ff("getAllGuids", .string("/Diary")) == .array([]))
            #expect(try await world.api(nil).ff("getAllGuids", .string("/ff/resources/Diary")) == .array([]))
            let users = try await world.api(FatFractalScriptAPI.systemPrincipal).ff(
                "getAllGuids", .string("/FFUser"))
            #expect(users == .array([.string(alice.userGuid), .string(bob.userGuid)]))
            var limits = FatFractalScriptAPI.Limits()
            limits.maxGuids = 2
            limits.pageSize = 1
            let error = await scriptError {
                _ = try await world.api(alice, limits: limits).ff("getAllGuids", .string("/Diary"))
            }
            #expect(error?.code == "script_result_too_large")
            #expect(error?.message.contains("more than 2 objects") == true)
        }
    }

    @Test("arguments of the wrong number, type or size are refused with the method and position named")
    func argumentErrors() async throws {
        try await ScriptAPIWorld.with { world in
            let api = world.api(nil)
            let cases: [(String, [JSONValue], String, String)] = [
                ("getObjFromUrl", [], "invalid_script_argument", "takes 1 argument(s), not 0"),
                (
                    "getObjFromUrl", [.number("3")], "invalid_script_argument",
                    "Argument 1 of ff.getObjFromUrl must be a URL string"
                ),
                (
                    "getArrayFromUrl", [.array([.string("/A"), .string("/B")])], "invalid_script_argument",
                    "exactly one URL, not 2"
                ),
                ("getArrayFromUrl", [.string("")], "invalid_script_argument", "empty URL"),
                (
                    "getArrayFromUrl", [.string("/ff/ext/Stats")], "invalid_script_argument",
                    "is not a resource URL"
                ),
                ("getArrayFromUrl", [.string("ftp://x/ff/resources/A")], "invalid_collection", ""),
                ("getArrayFromUrl", [.string("/1Bad")], "invalid_collection", ""),
                ("getArrayFromUrl", [.string("/A/(x eq")], "invalid_query", ""),
                ("getObjFromUrl", [.string("/A/g1/imageData")], "invalid_script_argument", "names a member"),
                (
                    "getObjFromUrl", [.string("/A/" + String(repeating: "g", count: 9000))],
                    "invalid_script_argument", "over 8192 bytes"
                ),
                (
                    "createObjAtUrl", [.string("x"), .string("/A")], "invalid_script_argument",
                    "Argument 1 of ff.createObjAtUrl must be an object, not string"
                ),
                (
                    "updateObj", [.object(JSONObject())], "invalid_script_argument",
                    "needs an ffUrl, or a clazz and a guid"
                ),
                ("deleteObj", [.number("1")], "invalid_script_argument", "must be an object or its URL"),
                (
                    "registerUser", [.object(JSONObject())], "invalid_script_argument",
                    "takes 2 to 4 argument(s)"
                ),
                ("noSuchCall", [], "unknown_script_call", "ff.noSuchCall"),
            ]
            for (method, arguments, code, words) in cases {
                let error = await scriptError { _ = try await api.call(method, arguments: arguments) }
                #expect(error?.status == 400, "\(method) \(arguments)")
                #expect(error?.code.rawValue == code, "\(method) \(arguments): \(String(describing: error))")
                #expect(
                    words.isEmpty || error?.message.contains(words) == true,
                    "\(method): \(error?.message ?? "")")
            }
        }
    }

    @Test("push and mail answer 501 not_configured")
    func notConfigured() async throws {
        try await ScriptAPIWorld.with { world in
            for (method, arguments) in [
                ("sendPushNotifications", [JSONValue.array([.string("g1")]), .string("hi")]),
                ("sendIOSPush", [.string("<a1a1>"), try json(#"{"aps":{"alert":"hi"}}"#)]),
                ("sendEmail", [try json(#"{"to":"a@b.test","subject":"s","text":"hi"}"#)]),
                ("sendSMTPEmail", [try json(#"{"to":"a@b.test","subject":"s","text":"hi","host":"x"}"#)]),
            ] {
                let error = await scriptError {
                    _ = try await world.api(nil).call(method, arguments: arguments)
                }
                #expect(error?.status == 501)
                #expect(error?.code == "not_configured")
                #expect(error?.message.hasPrefix(method) == true)
            }
        }
    }

    @Test("print and ff.logger go to the log with the level, the script and the request id")
    func logging() async throws {
        try await ScriptAPIWorld.with { world in
            let api = world.api(nil)
            api.log(level: "warn", message: "counting votes")
            api.log(level: "shout", message: "unknown level")
            let text = world.log.text
            #expect(text.contains("counting votes"))
            #expect(text.contains("req-1"))
            #expect(text.contains("TestScript"))
            #expect(text.lowercased().contains("warn"))
            #expect(text.contains("unknown level"))
        }
    }
}

extension ScriptAPIWorld {
    /// The guid of the array's element at `index`.
    func objectsGuid(_ array: JSONValue, _ index: Int) -> String {
        array.array[index]["guid"]?.stringValue ?? ""
    }
}
