import Foundation
import Synchronization
import Testing

@testable import RoostHTTP

/// Issue 24, item 3: two loops warning at once (failed accepts, failed handshakes) must never trap.
/// A trap would kill the test runner, so each check runs in a child process: a crash there is
/// this test failing, not the run ending.
@Suite("Rate-limited warning")
struct RateLimitedWarningTests {
    @Test("a time earlier than the last one logged is held back, not an arithmetic trap")
    func earlierTimeIsHeldBack() async {
        await #expect(processExitsWith: .success) {
            let warning = RateLimitedWarning()
            let second: UInt64 = 1_000_000_000
            guard warning.admit(now: 100 * second) == 0,
                // Read by another thread just before the line above took the lock.
                warning.admit(now: 99 * second) == nil,
                warning.admit(now: 100 * second) == nil,
                warning.admit(now: 161 * second) == 2
            else { exit(1) }
        }
    }

    @Test("threads warning together: one line each minute, the others counted, never a trap")
    func threadsWarningTogether() async {
        await #expect(processExitsWith: .success) {
            // As in the harness that found it: two threads released together, a fresh warning each
            // round, so both race to be the first line.
            let threads = 2
            let rounds = 20_000
            let warnings = (0..<rounds).map { _ in RateLimitedWarning() }
            let arrived = Atomic<Int>(0)
            let admitted = Atomic<Int>(0)
            let done = DispatchSemaphore(value: 0)
            for _ in 0..<threads {
                Thread {
                    for round in 0..<rounds {
                        // A barrier: every thread has arrived at this round before any warns.
                        arrived.add(1, ordering: .acquiringAndReleasing)
                        while arrived.load(ordering: .acquiring) < (round + 1) * threads {}
                        if warnings[round].admit() != nil { admitted.add(1, ordering: .relaxed) }
                    }
                    done.signal()
                }.start()
            }
            for _ in 0..<threads { done.wait() }
            let later = DispatchTime.now().uptimeNanoseconds + 61_000_000_000
            guard admitted.load(ordering: .relaxed) == rounds,
                warnings.allSatisfy({ $0.admit(now: later) == threads - 1 })
            else { exit(1) }
        }
    }
}

/// The audit that followed: every unsigned subtraction of times, and the products next to them.
@Suite("Time arithmetic that cannot trap")
struct TimeArithmeticTests {
    @Test("elapsed time saturates at 0 when now was read before the start was stored")
    func elapsedSaturates() {
        #expect(elapsed(since: 5, now: 8) == 3)
        #expect(elapsed(since: 8, now: 5) == 0)
        #expect(elapsed(since: UInt64.max, now: 0) == 0)
    }

    @Test("the upload rate rule holds for any size a blob may have (up to 1 TiB at 1 byte/s)")
    func uploadRateForHugeBlobs() async {
        await #expect(processExitsWith: .success) {
            let terabyte = 1 << 40
            guard
                !Connection.uploadTooSlow(
                    nanoseconds: 1_000_000_000_000, bytes: terabyte, readTimeout: 30, minimumRate: 1),
                Connection.uploadTooSlow(
                    nanoseconds: 41_000_000_000, bytes: 10 * 1024, readTimeout: 30, minimumRate: 1024),
                !Connection.uploadTooSlow(
                    nanoseconds: 39_000_000_000, bytes: 10 * 1024, readTimeout: 30, minimumRate: 1024)
            else { exit(1) }
        }
    }
}
