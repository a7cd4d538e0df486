import Testing

@testable import RoostHTTP

@Suite("Per-client keys")
struct ClientKeyTests {
    @Test("an IPv6 client counts by its /64; IPv4 by its address, however written; other text as it is")
    func keys() {
        #expect(clientKey(forAddress: "2001:db8:1:2:3:4:5:6") == "2001:db8:1:2::/64")
        #expect(clientKey(forAddress: "2001:db8:1:2::9") == "2001:db8:1:2::/64")
        #expect(clientKey(forAddress: "2001:db8:1:3::9") == "2001:db8:1:3::/64")
        #expect(clientKey(forAddress: "192.0.2.7") == "192.0.2.7")
        #expect(clientKey(forAddress: "::ffff:192.0.2.7") == "192.0.2.7")
        #expect(clientKey(forAddress: "-") == "-")
    }

    @Test("slots count per key and in all, and come back when released")
    func slots() {
        let slots = ClientSlots()
        #expect(slots.acquire("a", total: 3, perClient: 2))
        #expect(slots.acquire("a", total: 3, perClient: 2))
        #expect(!slots.acquire("a", total: 3, perClient: 2))
        #expect(slots.acquire("b", total: 3, perClient: 2))
        #expect(!slots.acquire("c", total: 3, perClient: 2))
        slots.release("a")
        #expect(slots.acquire("c", total: 3, perClient: 2))
        #expect(slots.inFlight == 3)
    }
}
