import Foundation
import RoostCore
import RoostTestSupport
import Testing

/// Issue 32, item 6: FatFractal apps name users by their e-mail address (PasswordReset's
/// `registerUser`). Such a name is the account's email too, so login by either stays one account.
@Suite("E-mail addresses as user names")
struct AddressUserNameTests {
    @Test("a userName that is an address registers, becomes the email, and logs in by every shape")
    func registerAndLogIn() async throws {
        let server = try await makeAccountServer()
        let registered = try await server.client.register("Grace.Hopper+navy@Example.com")
        #expect(registered.status == 201, "\(registered.text)")
        let user = try #require(registered.json["user"] as? [String: Any])
        #expect(user["userName"] as? String == "Grace.Hopper+navy@Example.com")
        #expect(user["email"] as? String == "Grace.Hopper+navy@Example.com")
        let bodies = [
            #"{"userName":"grace.hopper+navy@example.com","password":"correct horse"}"#,
            #"{"email":"GRACE.HOPPER+NAVY@EXAMPLE.COM","password":"correct horse"}"#,
            #"{"credential":{"userName":"Grace.Hopper+navy@Example.com","password":"correct horse"}}"#,
        ]
        for body in bodies {
            let response = try await server.client.send("POST", "/ff/login", json: body)
            #expect(response.status == 200, "\(body): \(response.text)")
            #expect((response.json["user"] as? [String: Any])?["guid"] as? String == user["guid"] as? String)
        }
        let basic = "Basic " + Data("grace.hopper+navy@example.com:correct horse".utf8).base64EncodedString()
        let viaBasic = try await server.client.send("POST", "/ff/login", headers: [("Authorization", basic)])
        #expect(viaBasic.status == 200, "\(viaBasic.text)")
        // The same address given as email too is the same thing said twice.
        let both = try await server.client.register("ada@example.com", extra: #","email":"Ada@Example.com""#)
        #expect(both.status == 201, "\(both.text)")
        #expect((both.json["user"] as? [String: Any])?["email"] as? String == "Ada@Example.com")
        await server.stop()
    }

    static let refusals: [APIScenario] = [
        APIScenario(
            name: "an address that is not the email", method: "POST", path: "/ff/register",
            body: #"{"userName":"grace@example.com","email":"other@example.com","password":"correct horse"}"#,
            status: 400,
            exactBody:
                #"{"status":400,"code":"invalid_field","message":"A userName that is an e-mail address is the account's email as well: leave email out or send the same address.","details":{"field":"userName","rule":"email_mismatch"}}"#
        ),
        APIScenario(
            name: "an address taken as someone's email", method: "POST", path: "/ff/register",
            body: #"{"userName":"ALICE@example.com","password":"correct horse"}"#, status: 409,
            exactBody:
                #"{"status":409,"code":"conflict","message":"That email is already registered; choose another or log in.","details":{"field":"email"}}"#
        ),
        APIScenario(
            name: "no domain", method: "POST", path: "/ff/register",
            body: #"{"userName":"grace@localhost","password":"correct horse"}"#, status: 400,
            exactBody:
                #"{"status":400,"code":"invalid_field","message":"A userName with '@' must be an e-mail address such as grace@example.com: one '@', a name before it and a domain with a dot after it.","details":{"field":"userName","rule":"address"}}"#
        ),
        APIScenario(
            name: "two @", method: "POST", path: "/ff/register",
            body: #"{"userName":"a@b@example.com","password":"correct horse"}"#, status: 400,
            code: "invalid_field",
            contains: [#""rule":"address""#]),
        APIScenario(
            name: "nothing before @", method: "POST", path: "/ff/register",
            body: #"{"userName":"@example.com","password":"correct horse"}"#, status: 400,
            code: "invalid_field",
            contains: [#""rule":"address""#]),
        APIScenario(
            name: "a domain ending in a dot", method: "POST", path: "/ff/register",
            body: #"{"userName":"grace@example.","password":"correct horse"}"#, status: 400,
            code: "invalid_field", contains: [#""rule":"address""#]),
        APIScenario(
            name: "a space in an address", method: "POST", path: "/ff/register",
            body: #"{"userName":"grace hopper@example.com","password":"correct horse"}"#, status: 400,
            code: "invalid_field", contains: [#""rule":"characters""#]),
        APIScenario(
            name: "an address of mixed scripts", method: "POST", path: "/ff/register",
            body: #"{"userName":"p\u0430ypal@example.com","password":"correct horse"}"#, status: 400,
            code: "invalid_field", contains: [#""rule":"mixed_scripts""#]),
        APIScenario(
            name: "an address longer than 254 bytes", method: "POST", path: "/ff/register",
            body:
                #"{"userName":"\#(String(repeating: "a", count: 243))@example.com","password":"correct horse"}"#,
            status: 400, code: "invalid_field", contains: [#""rule":"length""#]),
    ]

    @Test(
        "an address that is not the email, taken, or not an address is refused; nothing is stored",
        arguments: refusals)
    func refused(_ scenario: APIScenario) async throws {
        try await expectRegistrationRefused(scenario)
    }

    @Test("an address up to 254 bytes is a name, though other names stop at 64 characters")
    func longAddress() async throws {
        let server = try await makeAccountServer()
        let address = String(repeating: "a", count: 242) + "@example.com"
        #expect(address.utf8.count == 254)
        #expect(try await server.client.register(address).status == 201)
        let long = String(repeating: "a", count: 65)
        #expect(try await server.client.register(long).json["code"] as? String == "invalid_field")
        await server.stop()
    }

    @Test("an account whose email is an address keeps it: a later userName of that address is refused")
    func emailThenName() async throws {
        let server = try await makeAccountServer()
        #expect(try await server.client.register("grace@example.com").status == 201)
        let second = try await server.client.register("grace2", extra: #","email":"GRACE@example.com""#)
        #expect(second.status == 409)
        #expect(second.json["details"] as? [String: String] == ["field": "email"])
        await server.stop()
    }
}
