import Foundation
import Testing

@testable import RoostPostgres

/// Throughput of the database blob store (runs only with ROOST_MEASURE_BLOBS=1; it asserts
/// nothing about time, it prints).
@Suite(
    "PostgreSQL blob store: measured",
    .enabled(if: ProcessInfo.processInfo.environment["ROOST_MEASURE_BLOBS"] == "1"))
struct PostgresBlobMeasurementTests {
    @Test func adoptAndColdReadOf50MiB() async throws {
        try await withBlobDatabase { _, makeStorage in
            let writer = try makeStorage(1 << 30)
            let reader = try makeStorage(1 << 30)
            let bytes = blobBytes(50 << 20, seed: 99)
            let clock = ContinuousClock()
            var sha256 = ""
            let adopt = try await clock.measure { sha256 = try await upload(bytes, to: writer) }
            let cold = try await clock.measure { _ = try await download(sha256, from: reader) }
            let warm = try await clock.measure { _ = try await download(sha256, from: reader) }
            func rate(_ duration: Duration) -> String {
                let seconds =
                    Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
                return String(format: "%.0f MiB/s (%.2f s)", 50 / seconds, seconds)
            }
            print("50 MiB blob: adopt \(rate(adopt)), cold read \(rate(cold)), cached read \(rate(warm))")
        }
    }
}
