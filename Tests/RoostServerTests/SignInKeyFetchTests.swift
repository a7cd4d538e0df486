import Dispatch
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

    @Test(
        "signatures are checked on the bounded workers, not a loop: with every slot taken, 503 server_busy and the token unspent"
    )
    func signaturesAreCheckedOnTheWorkers() async throws {
        let workers = BackgroundWorkers(threads: 1, name: "test-sign-in", queueLimit: 1)
        let world = try await SignInWorld.make(workers: workers)
        defer { Task { await world.server.stop() } }
        // The only thread held and one job waiting: the queue of one is full.
        let hold = HeldWorker()
        let holders = (0..<2).map { _ in Task { await workers.run { hold.occupy() } } }
        #expect(
            await eventually {
                hold.entered.load(ordering: .sequentiallyConsistent) == 1 && workers.waiting == 1
            })
        let nonce = SignInWorld.makeNonce()
        let token = try await world.provider.issue(claims: world.claims(nonce: nonce))
        let busy = try await world.present(token, nonce: nonce)
        #expect(busy.status == 503)
        #expect(busy.header("Retry-After") == "2")
        #expect(busy.json["code"] as? String == "server_busy")
        hold.release.signal()
        hold.release.signal()
        for holder in holders { await holder.value }
        // Refused before it was spent: the same token signs in once a thread is free.
        let later = try await world.present(token, nonce: nonce)
        #expect(later.status == 201, "\(later.text)")
        // Checked on the worker thread, which ran it.
        #expect(workers.waiting == 0)
    }
}

/// Work that holds a worker thread until released.
private final class HeldWorker: Sendable {
    let release = DispatchSemaphore(value: 0)
    let entered = Atomic<Int>(0)

    func occupy() {
        entered.add(1, ordering: .sequentiallyConsistent)
        release.wait()
    }
}
