import RoostCore
import RoostHTTP
import RoostJSON
import Testing

@testable import RoostScripts
@testable import RoostServer

/// Issue 19: handler runs take turns in the script pool by who caused them, and carry the request.
@Suite("Handler runs: owner and request")
struct ScriptHandlerOwnerTests {
    @Test(
        "a user's handlers run as the user's turn, an anonymous caller's as its client's (an IPv6 /64), with the request's id"
    )
    func ownersAndRequestIDs() async throws {
        let open = #"{"collections": {"*": {"rules": {"create": "public"}}}}"#
        try await ScriptAPIWorld.with(definition: open) { world in
            let played = PlayedScripts { _, _ in ScriptOutcome() }
            var definition = world.definitions.definition
            definition.scripts.handlers = [
                ScriptHandler(
                    name: "Count", collection: "Post", events: [.create], phase: .post,
                    entry: ScriptEntry(module: "scripts/Count", function: "count"))
            ]
            world.definitions.replace(with: definition)
            var objects = world.objects
            objects.hooks = ScriptHandlerRunner(
                invoke: { try await played.invoke($0, $1) }, definitions: world.definitions,
                objects: world.objects, accounts: world.accounts,
                makeCalls: { caller, _, _, _, _ in world.api(caller) }, appAddress: "https://example.test",
                logger: world.logger)
            let alice = try await world.user("alice")
            let office = WriteOrigin(requestID: "req-a", client: clientKey(forAddress: "2001:db8:0:1::7"))
            _ = try await objects.serving(office).create(in: "Post", body: JSONObject(), caller: nil)
            let home = WriteOrigin(requestID: "req-b", client: "192.0.2.7")
            _ = try await objects.serving(home).create(in: "Post", body: JSONObject(), caller: alice)
            #expect(played.seen.map(\.owner) == ["address 2001:db8:0:1::/64", "user \(alice.userGuid)"])
            #expect(played.seen.map { $0.context["requestId"] } == [.string("req-a"), .string("req-b")])
            // A POST handler's write is committed: its run waits its owner's turn, never refused.
            #expect(played.seen.map(\.committed) == [true, true])
        }
    }
}
