// TransferProbe: streams a file up to a new object's blob member and back down to another file
// with RoostClient, in a process of its own, and prints how much its resident memory grew. The
// SDK's memory test runs it, so that nothing else in the test process can inflate the number.
import ExampleSupport
import Foundation
import RoostClient

struct Note: RoostModel {
    var text: String
}

/// The process's resident memory now, from /proc (Linux), in bytes.
func residentBytes() -> Int {
    guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8),
        let pages = Int(text.split(separator: " ")[1])
    else { return 0 }
    return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
}

/// The most resident memory seen at any progress call.
final class Peak: @unchecked Sendable {
    // Safe: `value` is only touched with `lock` held.
    private let lock = NSLock()
    private var value = 0
    func sample(_: TransferProgress) {
        let resident = residentBytes()
        lock.lock()
        value = max(value, resident)
        lock.unlock()
    }
    var peak: Int {
        lock.lock()
        defer { lock.unlock() }
        return value
    }
}

let usage = """
    usage: TransferProbe [--server URL] [--state DIR] run SOURCE TARGET

    Uploads SOURCE to the member `file` of a new Note, downloads it to TARGET, and prints
    `grown BYTES` (the most resident memory grew over its level before the transfers).
    """

let command = ExampleCommand.parse(program: "transfer-probe", usage: usage)
await runExample(usage: usage) {
    let client = try command.makeClient()
    let source = URL(fileURLWithPath: try command.argument(0, "the file to send"))
    let target = URL(fileURLWithPath: try command.argument(1, "where to save the copy"))
    let note = try await client.create(Note(text: "transfer"))
    let before = residentBytes()
    let peak = Peak()
    let outcome = try await client.upload(
        file: source, contentType: "application/octet-stream", to: "file", of: note,
        progress: { peak.sample($0) })
    guard let stored = outcome.stored else { throw UsageError(message: "the upload was queued, not sent") }
    _ = try await client.download(member: "file", of: stored, to: target, progress: { peak.sample($0) })
    print("grown \(max(0, peak.peak - before))")
}
