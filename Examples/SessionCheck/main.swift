// SessionCheck: seed 004's WordPress login flow on Roost. "Am I logged in?", log in, welcome,
// log out; the app keeps a token, never the password.
import ExampleSupport
import Foundation
import RoostClient

let usage = """
    usage: SessionCheck [--server URL] [--state DIR] COMMAND

    commands:
      status        am I logged in? (logged_in: 1 or 0)
      login NAME    log in (password on standard input)
      logout        log out (logged_out: 1 or 0)
    """

let command = ExampleCommand.parse(program: "sessioncheck", usage: usage)
await runExample(usage: usage) {
    let client = try command.makeClient()
    switch command.name {
    case "status":
        if let user = try await client.session() {
            print("logged_in: 1 (\(user.userName))")
        } else {
            print("logged_in: 0")
        }
    case "login":
        let user = try await client.login(
            userName: try command.argument(0, "a user name"), password: readPassword())
        print("welcome, \(user.firstName ?? user.userName)")
    case "logout":
        print("logged_out: \(try await client.logout() ? 1 : 0)")
    default:
        throw UsageError(message: "unknown command '\(command.name)'")
    }
}
