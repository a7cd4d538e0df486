import Foundation
import RoostHTTP

/// The lines `roost serve` prints on standard output about its own life: listening, redirecting,
/// shutting down. As text they are sentences a person reads (the first names the address, which
/// supervisors and tests wait for); with `--log-format json` each is one JSON object in the logs'
/// shape, with an `event` field, so a log collector never meets a line it cannot parse.
struct ServerAnnouncements: Sendable {
    let format: Logger.Format
    private let json: Logger

    init(format: Logger.Format) {
        self.format = format
        json = Logger(level: .info, format: .json) { bytes in
            bytes.withUnsafeBytes { pointer in _ = write(STDOUT_FILENO, pointer.baseAddress, pointer.count) }
        }
    }

    func announce(_ message: String, event: String, fields: [(String, String)] = []) {
        switch format {
        case .text: say(message)
        case .json: json.info(message, fields: [("event", event)] + fields)
        }
    }
}
