import Foundation
import RoostCore
import RoostServer
import RoostTestSupport

/// The app definition the permission tests run under: one collection per rule setup.
let permissionDefinition = #"""
    {
      "settings": {"allowNewCollections": true},
      "collections": {
        "Acronym": {"rules": {"list": "public", "read": "public", "create": "loggedIn"}},
        "Diary": {"rules": {"read": "createdBy eq @user.guid"}},
        "Board": {"rules": {
          "read": "createdBy eq @user.guid or readers contains_any @user.groups",
          "update": "createdBy eq @user.guid or editors contains_any @user.groups"}},
        "Locked": {"rules": {"list": "none", "read": "none", "create": "none", "update": "none", "delete": "none"}},
        "Poll": {"rules": {"create": "@request.body.owner eq @user.guid", "update": "owner eq @user.guid",
                           "delete": "none"}},
        "Profile": {"ownerOnlyFields": ["secret"], "indexes": ["secret"]},
        "Unlisted": {"rules": {"read": "public", "list": "none"}},
        "Catalogue": {"rules": {"list": "public", "read": "createdBy eq @user.guid"}}
      }
    }
    """#

/// A caller in the matrix.
enum Role: String, CaseIterable, Sendable {
    case anonymous, other, owner, member, admin
}

/// A server with four users and an admin: alice (owner), bob (other), carol (member of the group
/// `editors`, which dave made: only an admin chooses a group's guid), dave (admin, made with the
/// real `roost users create --admin`).
struct PermissionWorld: Sendable {
    let server: TestServer
    let tokens: [Role: String]
    let guids: [Role: String]
    /// The app definition file the server runs.
    let definitionPath: String

    /// Writes a new definition and has the server reload it.
    func apply(_ definition: String) async throws {
        try Data(definition.utf8).write(to: URL(fileURLWithPath: definitionPath))
        try await server.application.reloadAppDefinition()
    }

    static func make(definition: String = permissionDefinition) async throws -> PermissionWorld {
        // Admin commands act only on a database a server made.
        let directory = try await makeDataFolder()
        let admin = try await runRoost(
            ["users", "create", "dave", "--admin", "--data-dir", directory], input: "dave-password\n")
        guard admin.status == 0 else { throw TestClientError(description: admin.errorOutput) }
        let definitionPath = directory + "-app.json"
        try Data(definition.utf8).write(to: URL(fileURLWithPath: definitionPath))
        let server = try await TestServer(dataDirectory: directory) { configuration in
            configuration.appDefinitionPath = definitionPath
            configuration.passwordHasher = PasswordHasher.cheapForTests()
        }
        var tokens: [Role: String] = [:]
        var guids: [Role: String] = [:]
        for (role, name) in [(Role.owner, "alice"), (.other, "bob"), (.member, "carol")] {
            let registered = try await server.client.register(
                name, extra: #","email":"\#(name)@example.com""#)
            tokens[role] = registered.json["token"] as? String
            guids[role] = (registered.json["user"] as? [String: Any])?["guid"] as? String
        }
        tokens[.admin] = try await server.client.login("dave", password: "dave-password")
        let session = try await server.client.send(
            "GET", "/ff/session", headers: [("X-Token", tokens[.admin]!)])
        guids[.admin] = (session.json["user"] as? [String: Any])?["guid"] as? String
        let world = PermissionWorld(
            server: server, tokens: tokens, guids: guids, definitionPath: definitionPath)
        // A failed setup fails its test, not the whole test process.
        guard let member = guids[.member] else {
            throw TestClientError(description: "the member's guid is missing: its registration failed")
        }
        let group = try await world.send(
            .admin, "POST", "/ff/resources/FFUserGroup",
            json:
                #"{"guid":"editors","groupName":"Editors","users":[{"ffUrl":"/ff/resources/FFUser/\#(member)"}]}"#
        )
        guard group.status == 201 else { throw TestClientError(description: "group: \(group.text)") }
        return world
    }

    /// The tokens by role name, for scenario tables (`caller: "owner"`).
    var callerTokens: [String: String] {
        Dictionary(uniqueKeysWithValues: tokens.map { ($0.key.rawValue, $0.value) })
    }

    func headers(_ role: Role) -> [(String, String)] {
        tokens[role].map { [("X-Token", $0)] } ?? []
    }

    func send(_ role: Role, _ method: String, _ path: String, json: String? = nil) async throws
        -> TestResponse
    {
        if let json { return try await server.client.send(method, path, json: json, headers: headers(role)) }
        return try await server.client.send(method, path, headers: headers(role))
    }

    /// The guids of the items of a page answer.
    static func guids(_ response: TestResponse) -> Set<String> {
        Set((response.json["items"] as? [[String: Any]] ?? []).compactMap { $0["guid"] as? String })
    }
}
