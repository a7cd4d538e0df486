// Tokens: seed 003's "Where U At?" token service on Roost. POST/GET/DELETE /ff/tokens with the
// X-Token header; under the server's singleDevice policy a token issued on one device revokes
// the others.
import ExampleSupport
import Foundation
import RoostClient

let usage = """
    usage: Tokens [--server URL] [--state DIR] [--device ID] COMMAND

    commands:
      issue EMAIL|NAME [--manufacturer ID]   get a token for this device (password on standard input)
      check ID                               whether token ID is still valid
      list                                   this user's live tokens
      revoke ID                              revoke token ID
    """

let command = ExampleCommand.parse(program: "tokens", usage: usage)
await runExample(usage: usage) {
    let client = try command.makeClient { configuration in
        configuration.tokenHeader = .xToken
        if let device = command.options["device"] { configuration.deviceId = device }
    }
    switch command.name {
    case "issue":
        let token = try await client.issueToken(
            identifier: try command.argument(0, "an email or user name"), password: readPassword(),
            manufacturerId: command.options["manufacturer"])
        print(
            "token \(token.id) for device \(token.deviceId) expires \(describe(milliseconds: token.expiresAt))"
        )
    case "check":
        let id = try command.argument(0, "a token id")
        do {
            if let token = try await client.token(id: id) {
                print("valid until \(describe(milliseconds: token.expiresAt))")
            } else {
                print("expired or revoked")
            }
        } catch let error as RoostError where error.code == "invalid_token" {
            print("this device's token was revoked; issue a new one")
        }
    case "list":
        for token in try await client.tokens() {
            print("\(token.id) \(token.deviceId)\(token.current == true ? " (this device)" : "")")
        }
    case "revoke":
        let id = try command.argument(0, "a token id")
        try await client.revokeToken(id: id)
        print("revoked \(id)")
    default:
        throw UsageError(message: "unknown command '\(command.name)'")
    }
}
