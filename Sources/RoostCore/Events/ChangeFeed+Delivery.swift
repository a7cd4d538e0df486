import RoostJSON
import RoostStore
import RoostThreads

/// Deciding, for each change and stream, which event (if any) the stream's caller gets.
extension ChangeFeed {
    /// Where a stream stands after a round: the entries it has been through, the last id it
    /// was sent, and whether it stopped because its client is behind on reading.
    struct Outcome {
        var id: Int
        var position: Int64
        var delivered: Int64
        var backedUp: Bool
    }

    /// A stream during a round: where it stands, and whether it takes more this round.
    private struct Round {
        /// Where the stream is in the round's streams.
        let index: Int
        var outcome: Outcome
        var takesMore = true
        var open = true
    }

    /// Sends each stream its events of `batch` (those after its position), until its client is
    /// behind on reading; returns where each stream that is still open stands. Change by change,
    /// so each document is parsed once and only one is held parsed at a time; each change's sends
    /// go to the event loops together once every stream has been through it.
    func deliver(
        _ batch: [Change], to ready: [Int], of streams: [Stream], trimmedThrough: Int64, readAt: UInt64 = 0
    ) -> [Outcome] {
        let definition = definitions.definition
        let writes = EventBatch()
        var gathered = 0
        var rounds: [Round] = []
        rounds.reserveCapacity(ready.count)
        for index in ready {
            let stream = streams[index]
            if stream.position < trimmedThrough {
                // Entries it had not seen were trimmed: it resumes, and gets a reset.
                stream.sink.finish(
                    EventFormat.farewell(stream.delivered, reason: "fell behind the change log"),
                    after: writes)
                continue
            }
            rounds.append(
                Round(
                    index: index,
                    outcome: Outcome(
                        id: stream.id, position: stream.position, delivered: stream.delivered, backedUp: false
                    )))
        }
        for change in batch {
            defer {
                writes.flush()
                if readAt != 0 { DeliveryTrace.record(.readToHandedOn, since: readAt) }
            }
            var parsed: (before: JSONObject?, after: JSONObject?)?
            // Deciding and encoding an event is done once per viewer, not once per stream:
            // a thousand anonymous subscribers of a collection cost one. Neighbours are mostly
            // the same viewer: the last one is compared before the table is searched.
            var encoded: (all: [String: Encoded], last: (viewer: String, bytes: Encoded)?) = ([:], nil)
            // Viewers whose events are the same bytes (the same visible document) share one copy.
            var distinct: [(type: String, data: [UInt8], bytes: EventBytes)] = []
            // Streams that were sent the same events share their farewell's bytes.
            var farewell: (delivered: Int64, bytes: [UInt8]) = (-1, [])
            for index in rounds.indices
            where rounds[index].takesMore && change.sequence > streams[rounds[index].index].position {
                let stream = streams[rounds[index].index]
                var bytes = Encoded.none
                var revoked = false
                if change.operation == .revoke {
                    revoked = stream.caller?.tokenId == change.guid
                } else if stream.subscriptions.contains(where: { $0.collection == change.collection }) {
                    let viewer = stream.viewer.key
                    if let last = encoded.last, last.viewer == viewer {
                        bytes = last.bytes
                    } else if let known = encoded.all[viewer] {
                        bytes = known
                        encoded.last = (viewer, known)
                    } else {
                        let objects = parsed ?? ParsedChange.evaluables(of: change)
                        parsed = objects
                        let access = Access(caller: stream.caller, definition: definition)
                        if let event = event(for: change, stream, access, objects) {
                            bytes = encode(event, change.sequence, sharingWith: &distinct)
                        }
                        encoded.all[viewer] = bytes
                        encoded.last = (viewer, bytes)
                    }
                }
                let outcome: EventSendOutcome
                if case .refused = bytes {
                    // The streams hold all the event bytes they may: this one resumes later, from
                    // before the event, rather than the feed holding another copy of it.
                    stream.sink.finish(EventFormat.farewell(rounds[index].outcome.delivered), after: writes)
                    rounds[index].takesMore = false
                    rounds[index].open = false
                    continue
                }
                if case .bytes(let bytes) = bytes {
                    let delivered = rounds[index].outcome.delivered
                    if farewell.delivered != delivered {
                        farewell = (delivered, EventFormat.farewell(delivered))
                    }
                    outcome = stream.sink.send(bytes, farewell: farewell.bytes, unlessBackedUp: writes)
                    // The loops start writing while the rest of the streams are gone through.
                    gathered += 1
                    if gathered % Self.writesPerFlush == 0 { writes.flush() }
                } else {
                    outcome = stream.sink.isBackedUp ? .backedUp : .sent
                }
                switch outcome {
                case .backedUp:
                    rounds[index].outcome.backedUp = true
                    rounds[index].takesMore = false
                    if let since = stream.backedUpSince,
                        ContinuousClock.now - since > limits.slowReaderTimeout
                    {
                        stream.sink.finish(
                            EventFormat.farewell(rounds[index].outcome.delivered), after: writes)
                        rounds[index].open = false
                    }
                case .ended:
                    rounds[index].takesMore = false
                    rounds[index].open = false
                case .sent:
                    rounds[index].outcome.position = change.sequence
                    if case .bytes = bytes { rounds[index].outcome.delivered = change.sequence }
                    if revoked {
                        stream.sink.finish(
                            Array(": the token was revoked; log in again\n\n".utf8), after: writes)
                        rounds[index].takesMore = false
                        rounds[index].open = false
                    }
                }
            }
        }
        return rounds.filter(\.open).map(\.outcome)
    }

    /// A viewer's event for a change: none, its bytes, or none because the streams hold too much.
    enum Encoded {
        case none
        case bytes(EventBytes)
        case refused
    }

    /// The event's bytes: those of another viewer's identical event when there is one, else a new
    /// copy if it fits in what all streams may hold (``EventLimits/heldBytes``; an event alone
    /// always fits, or it could never be sent), else refused.
    private func encode(
        _ event: (type: String, data: [UInt8]), _ sequence: Int64,
        sharingWith distinct: inout [(type: String, data: [UInt8], bytes: EventBytes)]
    ) -> Encoded {
        if let same = distinct.first(where: { $0.type == event.type && $0.data == event.data }) {
            return .bytes(same.bytes)
        }
        let held = heldEventBytes
        if held > 0 && held + event.data.count > limits.heldBytes { return .refused }
        let bytes = EventBytes(
            EventFormat.event(id: sequence, type: event.type, data: event.data), counter: heldBytes)
        distinct.append((event.type, event.data, bytes))
        return .bytes(bytes)
    }

    /// Sends gathered before they are handed to the loops, within a change.
    static let writesPerFlush = 128

    /// What decides a stream's events besides the change: its caller and its subscriptions.
    static func viewerKey(caller: Principal?, subscriptions: [BoundSubscription]) -> String {
        let caller = caller.map { caller in
            [caller.userGuid, caller.isAdmin ? "admin" : "", caller.groups.sorted().joined(separator: ",")]
                .joined(separator: "\u{1E}")
        }
        return ([caller ?? "anonymous"] + subscriptions.map(\.key)).joined(separator: "\u{1D}")
    }

    /// The event a stream gets for a change: whether its caller saw the object through one of
    /// its subscriptions before the change and after it decides between create, update, delete,
    /// enter and leave.
    private func event(
        for change: Change, _ stream: Stream, _ access: Access,
        _ objects: (before: JSONObject?, after: JSONObject?)
    ) -> (type: String, data: [UInt8])? {
        func seen(_ evaluable: JSONObject?) -> Bool {
            guard let evaluable else { return false }
            return stream.subscriptions.contains {
                $0.matches(
                    collection: change.collection, guid: change.guid, evaluable: evaluable, access: access)
            }
        }
        let (before, after) = objects
        let (was, now) = (seen(before), seen(after))
        let type: String
        switch (change.operation, was, now) {
        case (.create, _, true): type = "create"
        case (.update, true, true): type = "update"
        case (.update, false, true): type = "enter"
        case (.update, true, false): type = "leave"
        case (.delete, true, _): type = "delete"
        default: return nil
        }
        guard now, let document = change.document,
            let visible = try? access.visibleDocument(document, in: change.collection)
        else {
            // Gone or no longer visible: only what the caller knew, which object it was.
            return (type, EventFormat.reference(change))
        }
        return (type, visible)
    }
}

/// A change's documents as rules see them, parsed once however many streams look at them.
enum ParsedChange {
    static func evaluables(of change: Change) -> (before: JSONObject?, after: JSONObject?) {
        (
            evaluable(change.previousDocument, change.previousACL, change),
            evaluable(change.document, change.acl, change)
        )
    }

    private static func evaluable(_ document: [UInt8]?, _ acl: [UInt8]?, _ change: Change) -> JSONObject? {
        guard let document else { return nil }
        let object = StoredObject(
            collection: change.collection, guid: change.guid, document: document, createdBy: nil,
            createdAt: 0,
            updatedBy: nil, updatedAt: 0, version: change.version, acl: acl)
        return try? Access.evaluable(object)
    }
}

/// Server-Sent Events as the feed writes them.
enum EventFormat {
    /// `id:`, `event:` and the data, one `data:` line per line of it.
    static func event(id: Int64, type: String, data: [UInt8]) -> [UInt8] {
        var bytes = Array("id: \(id)\nevent: \(type)\ndata: ".utf8)
        bytes.reserveCapacity(bytes.count + data.count + 2)
        for byte in data {
            // A stored document keeps its text, line breaks included; each starts a data line.
            if byte == 0x0A || byte == 0x0D {
                bytes += Array("\ndata: ".utf8)
            } else {
                bytes.append(byte)
            }
        }
        bytes += [0x0A, 0x0A]
        return bytes
    }

    /// `{"guid", "ffUrl"}`: what a `leave` or `delete` says of an object the caller may no
    /// longer see.
    static func reference(_ change: Change) -> [UInt8] {
        JSONWriter.bytes(
            .object(
                JSONObject(uniqueMembers: [
                    ("guid", .string(change.guid)),
                    ("ffUrl", .string("/ff/resources/\(change.collection)/\(change.guid)")),
                ])))
    }

    /// The client's position is older than the log keeps: it must fetch what it shows again,
    /// then follow from `last`.
    static func reset(last: Int64, window: ChangeWindow) -> [UInt8] {
        let data = JSONWriter.bytes(
            .object(
                JSONObject(uniqueMembers: [
                    (
                        "reason",
                        .string("The position is outside the change log's window; fetch the data again.")
                    ),
                    ("last", .integer(last)), ("oldest", .integer(window.trimmedThrough)),
                ])))
        return event(id: last, type: "reset", data: data)
    }

    /// The caller lost rights that objects it was shown relied on (a group membership, the admin
    /// flag): it must fetch what it shows again, then follow from `last`.
    static func accessReduced(last: Int64) -> [UInt8] {
        let data = JSONWriter.bytes(
            .object(
                JSONObject(uniqueMembers: [
                    (
                        "reason",
                        .string(
                            "Your access changed (a group membership or a role was removed); fetch the data again."
                        )
                    ),
                    ("last", .integer(last)),
                ])))
        return event(id: last, type: "reset", data: data)
    }

    /// The last words to a client that does not keep up.
    static func farewell(_ delivered: Int64, reason: String = "the client read too slowly") -> [UInt8] {
        Array(
            ": disconnected: \(reason); last delivered id \(delivered); reconnect with Last-Event-ID: \(delivered)\n\n"
                .utf8)
    }
}
