import Foundation
import RoostCore
import RoostStore

let usersHelp = """
    Manage user accounts in a data folder (the server may be running).

    USAGE:
      roost users list [--json] [options]
      roost users create NAME [--email EMAIL] [--admin] [options]
      roost users promote NAME [options]
      roost users demote NAME [options]
      roost users reset-password NAME [options]
      roost users delete NAME [options]
      roost users identities NAME [--json] [options]

    OPTIONS:
      --data-dir PATH       the server's data folder (default ./roost-data; env: ROOST_DATA_DIR)
      --password-stdin      read the password from standard input instead of prompting
      --email EMAIL         the new user's email (create only)
      --admin               make the new user an administrator (create only)
      --json                print the users (list) or identities (identities) as a JSON array
      -h, --help            show this help

    list prints every user: name, email, guid, admin, active, and notes accounts whose names are
    reserved now (system, anonymous, null, undefined; admin, admins, administrator and root,
    which only 'create' may give). promote makes a user an
    administrator and demote takes it away; their sessions take the change at once.
    Passwords are asked for twice without echo when the terminal is interactive; otherwise the
    first line of standard input is the password. reset-password ends every session of the user.
    The data folder must hold the server's database: start 'roost serve' on it once first.
    """

/// The actions of `roost users`, and whether each takes a user name.
private let userActions = [
    "list": false, "create": true, "promote": true, "demote": true, "reset-password": true, "delete": true,
    "identities": true,
]

/// `roost users ...`: returns the exit status.
func users(_ arguments: [String]) async -> Int32 {
    guard let action = arguments.first, !["-h", "--help", "help"].contains(action) else {
        print(usersHelp)
        return 0
    }
    var database = CommandDatabase()
    var email: String?
    var admin = false
    var passwordFromStdin = false
    var json = false
    var names: [String] = []
    var index = 1
    while index < arguments.count {
        let argument = arguments[index]
        switch argument {
        case "--data-dir", "--database", "--email":
            guard index + 1 < arguments.count else {
                printError("\(argument) needs a value\nRun 'roost users --help' for the options.")
                return 64
            }
            if argument == "--email" {
                email = arguments[index + 1]
            } else {
                _ = database.take(argument) { arguments[index + 1] }
            }
            index += 1
        case "--admin": admin = true
        case "--password-stdin": passwordFromStdin = true
        case "--json": json = true
        case "-h", "--help":
            print(usersHelp)
            return 0
        default:
            if argument.hasPrefix("-") {
                printError("unknown option '\(argument)'\nRun 'roost users --help' for the options.")
                return 64
            }
            names.append(argument)
        }
        index += 1
    }
    guard let takesName = userActions[action] else {
        printError("unknown users command '\(action)'\nRun 'roost users --help' for the commands.")
        return 64
    }
    guard takesName ? names.count == 1 : names.isEmpty else {
        printError(
            takesName
                ? "'roost users \(action)' takes one user name\nRun 'roost users --help' for the usage."
                : "'roost users \(action)' takes no user name\nRun 'roost users --help' for the usage.")
        return 64
    }
    guard !json || action == "list" || action == "identities" else {
        printError(
            "--json is for 'roost users list' and 'identities'\nRun 'roost users --help' for the options.")
        return 64
    }
    if let status = database.requireExisting() { return status }
    let name = names.first ?? ""
    do {
        try await database.withStorage { storage in
            let accounts = AccountService(
                objects: storage.objectStore, accounts: storage.accountStore, clock: SystemWallClock(),
                guids: RandomGuidGenerator(),
                throttle: LoginThrottle(clock: SystemWallClock()), decoyHash: "")
            switch action {
            case "list":
                let users = try await UserSummary.all(in: storage.objectStore)
                say(json ? UserSummary.json(users) : UserSummary.table(users))
                // Made before the name was reserved: it still logs in; the operator decides.
                for user in users where ReservedUserNames.isReserved(user.userName) {
                    printError(
                        "note: '\(user.userName)' (guid \(user.guid)) has a name registrations may no longer take (scripts or people take it for the system, anonymous or staff); deactivate or delete it unless it is yours"
                    )
                }
            case "promote", "demote":
                let promote = action == "promote"
                let (user, changed) = try await accounts.setAdmin(userName: name, promote)
                let guid = user.guid
                if !changed {
                    say(
                        "'\(name)' \(promote ? "is already" : "is not") an administrator (guid \(guid)); nothing changed"
                    )
                } else if promote {
                    say("'\(name)' is now an administrator (guid \(guid))")
                } else {
                    say("'\(name)' is no longer an administrator (guid \(guid))")
                }
            case "create":
                let password = try readPassword(fromStdin: passwordFromStdin)
                let user = try await accounts.createUser(
                    userName: name, email: email, password: password, admin: admin)
                say("created \(admin ? "administrator" : "user") '\(name)' (guid \(user.guid))")
            case "identities":
                let (guid, identities) = try await accounts.identities(
                    userName: name, in: storage.identityStore)
                say(json ? identitiesJSON(identities) : identitiesTable(identities, of: name, guid: guid))
            case "reset-password":
                let password = try readPassword(fromStdin: passwordFromStdin)
                try await accounts.resetPassword(userName: name, to: password)
                say("password of '\(name)' changed; every session of theirs has ended")
            default:
                try await accounts.deleteUser(userName: name)
                say("deleted user '\(name)', their sessions and their FFUser object")
            }
        }
        return 0
    } catch let error as RoostError {
        printError(error.message)
        return error.status == 404 ? 67 : 65
    } catch let error as UsageError {
        printError(error.message)
        return 64
    } catch {
        printError("\(error)")
        return exitStatus(for: error)
    }
}

/// Prompts twice without echo on a terminal; otherwise reads the first line of standard input.
func readPassword(fromStdin: Bool) throws -> String {
    if fromStdin || isatty(STDIN_FILENO) == 0 {
        guard let line = readLine(strippingNewline: true), !line.isEmpty else {
            throw UsageError(message: "no password on standard input")
        }
        return line
    }
    let first = try promptWithoutEcho("Password: ")
    let second = try promptWithoutEcho("Repeat password: ")
    guard first == second else { throw UsageError(message: "the two passwords differ; nothing was changed") }
    return first
}

private func promptWithoutEcho(_ prompt: String) throws -> String {
    FileHandle.standardError.write(Data(prompt.utf8))
    var saved = termios()
    tcgetattr(STDIN_FILENO, &saved)
    var silent = saved
    silent.c_lflag &= ~tcflag_t(ECHO)
    tcsetattr(STDIN_FILENO, TCSANOW, &silent)
    defer {
        tcsetattr(STDIN_FILENO, TCSANOW, &saved)
        FileHandle.standardError.write(Data("\n".utf8))
    }
    guard let line = readLine(strippingNewline: true) else { throw UsageError(message: "no password given") }
    return line
}

/// `roost users identities NAME`: one line per identity, or a note that there is none.
func identitiesTable(_ identities: [IdentityRecord], of name: String, guid: String) -> String {
    guard !identities.isEmpty else { return "'\(name)' (guid \(guid)) has no sign-in identities" }
    return identities.map { identity in
        "\(identity.provider)\t\(identity.subject)\t\(identity.email ?? "-")\t\(ISO8601DateFormatter().string(from: Date(timeIntervalSince1970: Double(identity.createdAt) / 1000)))"
    }.joined(separator: "\n")
}

func identitiesJSON(_ identities: [IdentityRecord]) -> String {
    let items = identities.map { identity -> [String: Any] in
        [
            "provider": identity.provider, "subject": identity.subject, "email": identity.email ?? NSNull(),
            "createdAt": identity.createdAt, "userGuid": identity.userGuid,
        ]
    }
    let data = (try? JSONSerialization.data(withJSONObject: items, options: [.sortedKeys])) ?? Data("[]".utf8)
    return String(decoding: data, as: UTF8.self)
}
