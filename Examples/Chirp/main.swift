// Chirp: seed 000's Twitter clone on Roost. Accounts, auto-login from the stored token,
// microposts that reference their author, a feed with authors inlined, and posts that wait in
// the offline queue while the server is down and are delivered exactly once when it is back.
import ExampleSupport
import Foundation
import RoostClient

struct Micropost: RoostModel {
    var text: String
    var user: Ref<RoostUser>
}

let usage = """
    usage: Chirp [--server URL] [--state DIR] COMMAND

    commands:
      register NAME [EMAIL]     create an account and log in (password on standard input)
      login NAME                log in (password on standard input)
      whoami                    who the stored token belongs to, checked with the server
      post TEXT [--count N]     post (N posts "TEXT 1".."TEXT N"); queued while the server is down
      feed [--count N]          the latest N posts (default 20) with their authors
           [--follow MAX]       then new posts as they arrive, live (stop after MAX; 0: until ^C)
      pending                   how many posts wait in the queue
      flush                     send queued posts now
      logout                    revoke the token and forget it
    """

let command = ExampleCommand.parse(program: "chirp", usage: usage)
await runExample(usage: usage) {
    let client = try command.makeClient()
    switch command.name {
    case "register":
        let user = try await client.register(
            userName: try command.argument(0, "a user name"), password: readPassword(),
            email: command.arguments.count > 1 ? command.arguments[1] : nil)
        print("registered \(user.userName)")
    case "login":
        let user = try await client.login(
            userName: try command.argument(0, "a user name"), password: readPassword())
        print("logged in as \(user.userName)")
    case "whoami":
        if let user = try await client.session() {
            print("logged in as \(user.userName)")
        } else {
            print("not logged in")
        }
    case "post":
        guard let user = await client.currentUser else {
            throw UsageError(message: "log in first: Chirp login NAME")
        }
        let text = try command.argument(0, "the text to post")
        let count = Int(command.options["count"] ?? "1") ?? 1
        for index in 1...max(count, 1) {
            let post = Micropost(text: count > 1 ? "\(text) \(index)" : text, user: Ref(guid: user.guid))
            switch try await client.create(post, policy: .queueWhenOffline) {
            case .delivered(let stored): print("posted \(stored.guid)")
            case .queued(let operation): print("queued \(operation.guid)")
            }
        }
    case "feed":
        let count = Int(command.options["count"] ?? "20") ?? 20
        let posts = try await client.query(Micropost.self).sorted(by: "createdAt", descending: true)
            .inlining(depth: 1).page(count: count)
        // Unbuffered, so these come before the live posts whatever stdout is.
        for post in posts {
            FileHandle.standardOutput.write(
                Data("@\(post.user.object?.userName ?? "?"): \(post.text)\n".utf8))
        }
        guard let follow = command.options["follow"].flatMap(Int.init) else { break }
        // Realtime: the server pushes each new post; the stream reconnects by itself and resumes
        // where it stopped, so a flaky network loses none.
        var shown = 0
        for try await change in client.changes(of: Micropost.self) {
            guard case .created(let post) = change.kind else { continue }
            let author = try await client.query(Micropost.self).where("guid", .eq, QueryValue(post.guid))
                .inlining(depth: 1).page(count: 1).first?.user.object?.userName
            FileHandle.standardOutput.write(Data("@\(author ?? "?"): \(post.value.text)\n".utf8))
            shown += 1
            if follow > 0 && shown >= follow { break }
        }
    case "pending":
        print("\(await client.pendingOperations.count) pending")
    case "flush":
        let result = await client.flush()
        print(
            "delivered \(result.delivered), failed \(result.failed), pending \(await client.pendingOperations.count)"
        )
    case "logout":
        print(try await client.logout() ? "logged out" : "was not logged in")
    default:
        throw UsageError(message: "unknown command '\(command.name)'")
    }
}
