import Synchronization
import Testing

@testable import RoostServer

@Suite("Each user's share of the script pool")
struct ScriptCallerGateTests {
    final class Arrivals: Sendable {
        let order = Mutex<[Int]>([])
    }

    @Test("a user's runs past the limit wait in order; another user's do not wait; tryEnter refuses at once")
    func gate() async throws {
        let gate = ScriptCallerGate(limit: 2)
        await gate.enter("ann")
        await gate.enter("ann")
        #expect(!gate.tryEnter("ann"))
        #expect(gate.tryEnter("bob"))
        let arrivals = Arrivals()
        var waiters: [Task<Void, Never>] = []
        for index in 1...3 {
            waiters.append(
                Task {
                    await gate.enter("ann")
                    arrivals.order.withLock { $0.append(index) }
                })
            // One at a time, so that the queue's order is known.
            while gate.waiting < index { await Task.yield() }
        }
        #expect(arrivals.order.withLock { $0 }.isEmpty)
        for waiter in waiters {
            gate.leave("ann")
            await waiter.value
        }
        #expect(arrivals.order.withLock { $0 } == [1, 2, 3])
        #expect(gate.waiting == 0)
        // Waiters 2 and 3 hold the two places; giving them back frees ann.
        #expect(!gate.tryEnter("ann"))
        gate.leave("ann")
        gate.leave("ann")
        #expect(gate.tryEnter("ann"))
    }
}
