// Acronyms: seed 002's Vapor app, on Roost. HTTP Basic login that returns a bearer token; anyone
// lists acronyms, only logged-in users add them (rules in the server's roost.json).
import ExampleSupport
import Foundation
import RoostClient

struct Acronym: RoostModel {
    var short: String
    var long: String
}

let usage = """
    usage: Acronyms [--server URL] [--state DIR] COMMAND

    commands:
      list                 every acronym, for anyone
      add SHORT LONG       add one (needs a login)
      login NAME           log in with HTTP Basic (password on standard input)
      register NAME        create an account (password on standard input)
      logout               revoke the token
    """

let command = ExampleCommand.parse(program: "acronyms", usage: usage)
await runExample(usage: usage) {
    let client = try command.makeClient()
    switch command.name {
    case "list":
        for acronym in try await client.query(Acronym.self).sorted(by: "short").all() {
            print("\(acronym.short): \(acronym.long)")
        }
    case "add":
        let acronym = try await client.create(
            Acronym(
                short: try command.argument(0, "the acronym"), long: try command.argument(1, "its meaning")))
        print("added \(acronym.short) as \(acronym.guid)")
    case "login":
        let user = try await client.login(
            userName: try command.argument(0, "a user name"), password: readPassword(), method: .basic)
        print("logged in as \(user.userName)")
    case "register":
        let user = try await client.register(
            userName: try command.argument(0, "a user name"), password: readPassword())
        print("registered \(user.userName)")
    case "logout":
        print(try await client.logout() ? "logged out" : "was not logged in")
    default:
        throw UsageError(message: "unknown command '\(command.name)'")
    }
}
