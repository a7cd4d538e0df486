import Foundation
import RoostCore
import RoostPush
import RoostTestSupport
import Testing

/// Pushes per second to the fake APNs through one connection; run by bench/push.sh
/// (ROOST_PUSH_BENCH=<pushes>, ROOST_PUSH_BENCH_CONCURRENCY=<sends in flight>).
@Suite(.enabled(if: fakesAvailable && ProcessInfo.processInfo.environment["ROOST_PUSH_BENCH"] != nil))
struct PushBenchmark {
    @Test func pushesPerSecondThroughOneConnection() async throws {
        let environment = ProcessInfo.processInfo.environment
        let total = Int(environment["ROOST_PUSH_BENCH"] ?? "") ?? 20_000
        let concurrency = Int(environment["ROOST_PUSH_BENCH_CONCURRENCY"] ?? "") ?? 200
        try await APNsFixture.run { fixture in
            let sender = fixture.sender
            // Warm up: the connection and the provider token.
            #expect(
                await sender.send(PushNotification(body: "warm"), to: apnsTarget(deviceToken(1))).isDelivered)
            let started = ContinuousClock.now
            let cpuBefore = processCPUSeconds()
            let delivered = await withTaskGroup(of: Int.self) { group in
                for worker in 0..<concurrency {
                    group.addTask {
                        var delivered = 0
                        for index in stride(from: worker, to: total, by: concurrency) {
                            let notification = PushNotification(title: "Bench", body: "push \(index)")
                            if await sender.send(notification, to: apnsTarget(deviceToken(index % 200)))
                                .isDelivered
                            {
                                delivered += 1
                            }
                        }
                        return delivered
                    }
                }
                return await group.reduce(0, +)
            }
            let elapsed = ContinuousClock.now - started
            let cpuPerPush = (processCPUSeconds() - cpuBefore) / Double(total) * 1e6
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            print(
                "push bench: \(delivered)/\(total) delivered in \(String(format: "%.2f", seconds)) s, "
                    + "\(Int(Double(delivered) / seconds)) pushes/s, \(concurrency) in flight, "
                    + "\(sender.connectionsOpened) connection(s), \(Int(cpuPerPush)) µs of sender CPU a push")
            #expect(delivered == total)
            #expect(sender.connectionsOpened == 1)
        }
    }
}

/// User and system CPU time of this process (the sender's side: the fake is another process).
private func processCPUSeconds() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    let user = Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6
    return user + Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6
}
