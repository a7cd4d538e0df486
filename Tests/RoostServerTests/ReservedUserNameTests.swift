import Foundation
import RoostCore
import RoostServer
import RoostTestSupport
import Testing

/// Issue 24, item 11: nobody registers as FatFractal's system or anonymous user, or as the staff.
@Suite("Reserved user names")
struct ReservedUserNameTests {
    static let reserved = [
        "system", "System", "SYSTEM", "anonymous", "Anonymous", "null", "undefined", "admin", "ADMIN",
        "admins", "administrator", "root",
        // All-Cyrillic look-alikes (ѕ у ѕ т е м; а і): one script, so only the skeleton refuses them.
        "\\u0455\\u0443\\u0455\\u0442\\u0435\\u043C", "\\u0430\\u0501\\u043C\\u0456\\u043F",
        // Dotless ı.
        "adm\\u0131n",
    ]

    @Test("a reserved name is refused with one answer, whatever its case or look-alike letters")
    func registrationRefusesReservedNames() async throws {
        let server = try await makeAccountServer()
        var bodies: Set<String> = []
        for name in Self.reserved {
            let response = try await server.client.register(name)
            #expect(response.status == 400, "\(name): \(response.text)")
            #expect(response.json["code"] as? String == "invalid_field")
            let details = response.json["details"] as? [String: Any]
            #expect(details?["field"] as? String == "userName")
            #expect(details?["rule"] as? String == "reserved")
            bodies.insert(response.text)
        }
        #expect(bodies.count == 1, "\(bodies)")
        for name in ["systems", "system.ops", "sys", "anonymous2", "administrators", "rooted", "nullable"] {
            #expect(try await server.client.register(name).status == 201, "\(name)")
        }
        await server.stop()
    }

    @Test("an operator may name an account admin, never system; roost users list points them out")
    func operatorsMayGiveStaffNames() async throws {
        let directory = try await makeDataFolder()
        let system = try await runRoost(
            ["users", "create", "system", "--data-dir", directory], input: "long enough password\n")
        #expect(system.status == 65)
        #expect(system.errorOutput.contains("This userName is reserved"))
        let admin = try await runRoost(
            ["users", "create", "Admin", "--admin", "--data-dir", directory], input: "long enough password\n")
        #expect(admin.status == 0, "\(admin.errorOutput)")
        let list = try await runRoost(["users", "list", "--data-dir", directory])
        #expect(list.status == 0)
        #expect(list.errorOutput.contains("note: 'Admin' (guid "))
        // Taken or not, a registration of a reserved name gets the same answer.
        let server = try await TestServer(dataDirectory: directory) { configuration in
            configuration.passwordHasher = PasswordHasher.cheapForTests()
        }
        let taken = try await server.client.register("admin")
        let free = try await server.client.register("administrator")
        #expect(taken.status == 400)
        #expect(taken.text == free.text)
        await server.stop()
    }
}
