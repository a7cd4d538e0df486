import Foundation
import Testing

@testable import RoostClient

/// What each answer means for a queued write, without a network.
@Suite struct DeliveryRulesTests {
    func operation(
        _ kind: QueuedOperation.Kind, owner: String? = "u1", version: Int? = nil, sequence: Int64 = 1
    )
        -> QueuedOperation
    {
        QueuedOperation(
            id: "op-\(sequence)", sequence: sequence, kind: kind, collection: "Note", guid: "g1",
            expectedVersion: version, body: nil, owner: owner, queuedAt: Date(timeIntervalSince1970: 0),
            attempts: 0)
    }

    func error(_ status: Int, _ code: String) -> String {
        #"{"status":\#(status),"code":"\#(code)","message":"m","details":{}}"#
    }

    @Test func verdicts() {
        let create = operation(.create)
        let cases: [(String, QueuedOperation, Result<TransportResponse, RoostError>, DeliveryVerdict)] = [
            (
                "created", create, ScriptedTransport.json(201, #"{"version":1}"#, headers: ["ETag": "\"1\""]),
                .delivered(version: 1)
            ),
            (
                "version from the body", create, ScriptedTransport.json(200, #"{"version":4}"#),
                .delivered(version: 4)
            ),
            (
                "deleted", operation(.delete), .success(TransportResponse(status: 204)),
                .delivered(version: nil)
            ),
            (
                "already deleted", operation(.delete), ScriptedTransport.json(404, error(404, "not_found")),
                .delivered(version: nil)
            ),
            (
                "patch of a missing object", operation(.patch),
                ScriptedTransport.json(404, error(404, "not_found")),
                .drop(RoostError(status: 404, code: "not_found", message: "m"))
            ),
            (
                "update of an object read, deleted since", operation(.patch, version: 3),
                ScriptedTransport.json(404, error(404, "not_found")), .conflict
            ),
            ("network", create, ScriptedTransport.unreachable, .retry(after: nil, reachable: false)),
            (
                "server error", create, ScriptedTransport.json(503, error(503, "unavailable")),
                .retry(after: nil, reachable: true)
            ),
            (
                "throttled", create,
                ScriptedTransport.json(429, error(429, "too_many_attempts"), headers: ["Retry-After": "3"]),
                .retry(after: 3, reachable: true)
            ),
            (
                "same key running", create, ScriptedTransport.json(409, error(409, "idempotency_key_in_use")),
                .retry(after: nil, reachable: true)
            ),
            ("guid taken", create, ScriptedTransport.json(409, error(409, "conflict")), .confirmCreate),
            (
                "made, answer lost", operation(.patch),
                ScriptedTransport.json(409, error(409, "idempotency_key_lost_answer")),
                .delivered(version: nil)
            ),
            (
                "token expired", create, ScriptedTransport.json(401, error(401, "invalid_token")),
                .waitForLogin
            ),
            (
                "anonymous refused", operation(.create, owner: nil),
                ScriptedTransport.json(401, error(401, "login_required")),
                .drop(RoostError(status: 401, code: "login_required", message: "m"))
            ),
            (
                "forbidden", create, ScriptedTransport.json(403, error(403, "forbidden")),
                .drop(RoostError(status: 403, code: "forbidden", message: "m"))
            ),
            (
                "version moved on: rebase, never a silent drop", operation(.replace, version: 2),
                ScriptedTransport.json(412, error(412, "version_mismatch")), .conflict
            ),
            (
                "a patch's version moved on", operation(.patch, version: 2),
                ScriptedTransport.json(412, error(412, "version_mismatch")), .conflict
            ),
            (
                "a delete's version moved on", operation(.delete, version: 2),
                ScriptedTransport.json(412, error(412, "version_mismatch")), .conflict
            ),
            (
                "not Roost", create, ScriptedTransport.json(400, "<html>"),
                .drop(RoostError(status: 400, code: "invalid_response", message: ""))
            ),
        ]
        for (name, operation, outcome, expected) in cases {
            let verdict = DeliveryVerdict.judge(operation, outcome)
            switch (verdict, expected) {
            case (.drop(let got), .drop(let want)):
                #expect(got.status == want.status && got.code == want.code, "\(name)")
            default:
                #expect(verdict == expected, "\(name)")
            }
        }
    }

    @Test func laterWritesToTheSameObjectFollowItsVersion() {
        let first = operation(.replace, version: 3, sequence: 1)
        let queue = [
            first, operation(.patch, version: 3, sequence: 2), operation(.patch, version: nil, sequence: 3),
            operation(.patch, version: 1, sequence: 4),
        ]
        let rebased = Array(queue.dropFirst()).rebased(after: first, newVersion: 4)
        #expect(rebased.map(\.expectedVersion) == [4, nil, 1])
        // A write after a create expects version 1, which the create produced.
        let create = operation(.create, sequence: 1)
        #expect(
            [operation(.replace, version: 1, sequence: 2)].rebased(after: create, newVersion: 1)[0]
                .expectedVersion == 1)
    }
}
