import Foundation
import RoostCore
import RoostTestSupport
import Synchronization
import Testing

/// The provider's key set as sign-ins wait for it: a fetch in flight holds up only the sign-ins
/// that need it.
@Suite("Sign-in key fetches")
struct SignInKeyFetchTests {
    @Test(
        "a sign-in whose key is cached does not wait for a key fetch in flight (one unknown kid stalls no one)"
    )
    func cachedKeysServeDuringAFetch() async throws {
        // The fetch may take a minute; the test client gives up after 10 s, so a sign-in that
        // waited for it would fail here rather than pass late.
        let world = try await SignInWorld.make(keysTimeoutMilliseconds: 60_000)
        defer { Task { await world.server.stop() } }
        #expect(try await world.signIn().status == 201)
        #expect(world.provider.keyFetches == 1)
        world.clock.advance(seconds: 60)
        try await world.provider.hold(true)
        let unknown = Task { try await world.signIn(kid: "made-up").text }
        try await eventually { world.provider.heldFetches == 1 }
        let cached = try await world.signIn()
        #expect(cached.status == 200, "\(cached.text)")
        #expect(world.provider.heldFetches == 1)
        try await world.provider.hold(false)
        #expect(try await unknown.value == errorBody(.unknownKey))
        #expect(world.provider.keyFetches == 2)
    }
}
