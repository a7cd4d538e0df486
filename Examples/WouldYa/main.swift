// WouldYa: seed 001's "would you rather" game on Roost. Two celebrities of one gender picked at
// random (never the same twice), and a choice recorded after logging in ("log in, then carry on").
import ExampleSupport
import Foundation
import RoostClient

struct Celebrity: RoostModel {
    var name: String
    var gender: String
}

struct Choice: RoostModel {
    var winner: Ref<Celebrity>
    var loser: Ref<Celebrity>
}

let usage = """
    usage: WouldYa [--server URL] [--state DIR] COMMAND

    commands:
      seed                          store the celebrities with their photos (once; again adds none)
      pair GENDER                   two different celebrities of GENDER, picked at random
      choose WINNER LOSER --user N  record a choice by guid; logs in as N first if needed
                                    (password on standard input)
      photo GUID FILE               save a celebrity's photo (the imageData blob) to FILE
      watch MAX                     choices as players make them, live (stop after MAX; 0: until ^C)
      register NAME                 create an account (password on standard input)
    """

let celebrities = [
    ("Ada Lovelace", "female"), ("Grace Hopper", "female"), ("Hedy Lamarr", "female"),
    ("Alan Turing", "male"), ("Charles Babbage", "male"), ("Linus Pauling", "male"),
]

let command = ExampleCommand.parse(program: "wouldya", usage: usage)
await runExample(usage: usage) {
    let client = try command.makeClient()
    switch command.name {
    case "seed":
        var added = 0
        for (index, (name, gender)) in celebrities.enumerated() {
            do {
                let celebrity = try await client.create(
                    Celebrity(name: name, gender: gender), guid: "celebrity-\(index + 1)")
                // A stand-in photo: PNG's signature, then the name; the app shows imageData.
                let photo = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + Array(name.utf8))
                _ = try await client.upload(photo, contentType: "image/png", to: "imageData", of: celebrity)
                added += 1
            } catch let error as RoostError where error.status == 409 {
                continue  // seeded before
            }
        }
        print("seeded \(added) celebrities")
    case "pair":
        let gender = try command.argument(0, "a gender")
        let query = client.query(Celebrity.self).where("gender", .eq, QueryValue(gender))
        guard let left = try await query.random(),
            let right = try await query.and("guid", .ne, QueryValue(left.guid)).random()
        else {
            print("not enough celebrities of gender '\(gender)'; run seed first")
            return
        }
        print("left \(left.guid) \(left.name)")
        print("right \(right.guid) \(right.name)")
    case "choose":
        let winner = try command.argument(0, "the winner's guid")
        let loser = try command.argument(1, "the loser's guid")
        if let userName = command.options["user"] {
            await client.setLoginHandler { [client] _ in
                FileHandle.standardError.write(Data("Log in as \(userName) to vote.\n".utf8))
                return (try? await client.login(userName: userName, password: readPassword())) != nil
            }
        }
        let choice = try await client.create(Choice(winner: Ref(guid: winner), loser: Ref(guid: loser)))
        print("recorded \(choice.guid)")
    case "photo":
        let celebrity = try await client.fetch(
            Celebrity.self, guid: try command.argument(0, "a celebrity's guid"))
        let file = URL(fileURLWithPath: try command.argument(1, "a file to write"))
        let data = try await client.download(member: "imageData", of: celebrity)
        try data.write(to: file)
        print("saved \(data.count) bytes of \(celebrity.name)'s photo")
    case "watch":
        let limit = Int(try command.argument(0, "how many choices to show (0: until interrupted)")) ?? 0
        var shown = 0
        // Realtime: the server pushes each new choice; the stream reconnects and resumes by itself.
        for try await change in client.changes(of: Choice.self) {
            guard case .created(let choice) = change.kind else { continue }
            let winner = try await client.fetch(Celebrity.self, guid: choice.value.winner.guid)
            let loser = try await client.fetch(Celebrity.self, guid: choice.value.loser.guid)
            FileHandle.standardOutput.write(Data("\(winner.name) over \(loser.name)\n".utf8))
            shown += 1
            if limit > 0 && shown >= limit { break }
        }
    case "register":
        let user = try await client.register(
            userName: try command.argument(0, "a user name"), password: readPassword())
        print("registered \(user.userName)")
    default:
        throw UsageError(message: "unknown command '\(command.name)'")
    }
}
