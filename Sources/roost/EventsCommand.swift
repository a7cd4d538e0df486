import Foundation
import RoostJSON
import RoostStore

let eventsHelp = """
    List and re-queue the failed runs of ASYNC script handlers.

    USAGE:
      roost events failed [--json] [--data-dir PATH | --database URL]
      roost events retry (--all | EVENT_ID...) [--data-dir PATH | --database URL]

    OPTIONS:
      --data-dir PATH       the server's data folder (default ./roost-data; env: ROOST_DATA_DIR)
      --database URL        the PostgreSQL database instances share (env: ROOST_DATABASE_URL)
      --json                print the failed runs as a JSON array (failed only)
      --all                 re-queue every failed run (retry only)
      -h, --help            show this help

    ASYNC handlers run after the client's answer, from the change log. A run that fails is
    retried after 1 s, then 2 s, 4 s, ... (at most 10 minutes apart); after 8 failed attempts the
    event is given up. 'failed' lists the runs waiting for a retry and those given up: handler,
    event id (Collection:sequence, the id the script gets as context.eventId), attempts, the last
    error, and when the next attempt is due or "gave up". 'retry' makes the given runs due now
    with their attempts reset; a running server retries them within a second. Events the change
    log dropped before they were dispatched (a handler stuck for longer than the log keeps
    undispatched events: 7 days or 1,000,000 entries past its window) are listed with the error
    "trimmed" and cannot be retried. The server may be running.

    EXAMPLE:
      roost events failed --data-dir /var/lib/roost
      roost events retry WouldYa:1042 --data-dir /var/lib/roost
    """

/// The most failed runs `roost events failed` prints.
let eventsListLimit = 10_000

/// `roost events failed|retry`: returns the exit status.
func events(_ arguments: [String]) async -> Int32 {
    guard let action = arguments.first, ["failed", "retry"].contains(action) else {
        print(eventsHelp)
        return arguments.isEmpty || ["-h", "--help", "help"].contains(arguments[0]) ? 0 : 64
    }
    var rest = Array(arguments.dropFirst())
    if rest.contains(where: { ["-h", "--help"].contains($0) }) {
        print(eventsHelp)
        return 0
    }
    let json = rest.contains("--json")
    let all = rest.contains("--all")
    rest.removeAll { $0 == "--json" || $0 == "--all" }
    guard let (database, ids) = databaseAndNames(rest[...], command: "events") else { return 64 }
    if action == "failed" {
        guard ids.isEmpty, !all else {
            printError("'roost events failed' takes no event id\nRun 'roost events --help' for the usage.")
            return 64
        }
    } else {
        guard !json else {
            printError("--json is for 'roost events failed'\nRun 'roost events --help' for the options.")
            return 64
        }
        guard all != !ids.isEmpty else {
            printError(
                "'roost events retry' takes --all or event ids\nRun 'roost events --help' for the usage.")
            return 64
        }
        if let bad = ids.first(where: { ScriptOutbox.parseEventID($0) == nil }) {
            printError("'\(bad)' is not an event id; event ids look like Collection:1042")
            return 64
        }
    }
    if let status = database.requireExisting() { return status }
    do {
        return try await database.withStorage { storage in
            if action == "failed" {
                let runs = try await storage.scriptOutbox.failedRuns(limit: eventsListLimit + 1)
                say(
                    json
                        ? failedRunsJSON(runs.prefix(eventsListLimit))
                        : failedRunsTable(runs.prefix(eventsListLimit)))
                if runs.count > eventsListLimit {
                    printError("only the first \(eventsListLimit) failed runs are listed")
                }
                return 0
            }
            let now = Int64(Date().timeIntervalSince1970 * 1000)
            let count = try await storage.scriptOutbox.requeue(events: all ? nil : ids, now: now)
            guard count > 0 || all else {
                printError("no failed run of \(ids.joined(separator: ", ")) can be retried")
                return 67
            }
            say("re-queued \(count) failed run\(count == 1 ? "" : "s"); a running server retries them now")
            return 0
        }
    } catch {
        printError("\(error)")
        return 65
    }
}

/// When the next attempt is due, or why there is none.
private func nextAttemptText(_ run: FailedRun) -> String {
    guard let next = run.nextAttempt else { return run.trimmed ? "gave up (trimmed)" : "gave up" }
    return Date(timeIntervalSince1970: Double(next) / 1000).formatted(.iso8601)
}

/// Columns padded to their widest cell, a header first; errors on one line, cut to 100 characters.
private func failedRunsTable(_ runs: ArraySlice<FailedRun>) -> String {
    guard !runs.isEmpty else { return "no failed async runs" }
    let rows =
        [["HANDLER", "EVENT", "ATTEMPTS", "NEXT ATTEMPT", "LAST ERROR"]]
        + runs.map { run in
            let error = run.error.split(whereSeparator: \.isNewline).joined(separator: " ")
            return [
                run.handler, run.eventID, String(run.attempts), nextAttemptText(run),
                error.count > 100 ? String(error.prefix(99)) + "…" : error,
            ]
        }
    let widths = (0..<5).map { column in rows.map { $0[column].count }.max() ?? 0 }
    return rows.map { row in
        row.enumerated().map { column, cell in
            column == row.count - 1
                ? cell : cell.padding(toLength: widths[column] + 2, withPad: " ", startingAt: 0)
        }.joined()
    }.joined(separator: "\n")
}

/// A JSON array of `{"handler","eventId","attempts","error","nextAttempt","state","trimmed"}`;
/// nextAttempt is milliseconds since 1970, null once given up.
private func failedRunsJSON(_ runs: ArraySlice<FailedRun>) -> String {
    JSONWriter.string(
        .array(
            runs.map { run in
                .object(
                    JSONObject(uniqueMembers: [
                        ("handler", .string(run.handler)), ("eventId", .string(run.eventID)),
                        ("attempts", .integer(Int64(run.attempts))), ("error", .string(run.error)),
                        ("nextAttempt", run.nextAttempt.map(JSONValue.integer) ?? .null),
                        ("state", .string(run.state.rawValue)), ("trimmed", .bool(run.trimmed)),
                    ]))
            }))
}
