import Foundation

/// A queued write that met a change made elsewhere to the same fields, as the conflict handler
/// sees it. Field values are the model's fields (metadata left out).
public struct Conflict: Sendable, Equatable {
    /// The object's collection.
    public let collection: String
    /// The object's guid.
    public let guid: String
    /// The fields as this device read them; nil when the write was not made from a read
    /// (an explicit ``Roost/patch(_:guid:_:expectedVersion:policy:)`` or a replace).
    public let base: [String: JSON]?
    /// The fields as this device wants them; nil for a delete.
    public let mine: [String: JSON]?
    /// The fields as the server has them now.
    public let theirs: [String: JSON]
    /// The server's version now.
    public let theirVersion: Int
    /// The dotted paths both sides changed to different values.
    public let fields: [String]
}

/// What to do with a conflict.
public enum ConflictResolution: Sendable, Equatable {
    /// Keep the server's values of the conflicting fields (this device's other changes still go).
    case serverWins
    /// Write this device's values over the server's.
    case clientWins
    /// Write these fields (the object's app fields as they should be).
    case merged([String: JSON])
    /// Drop this device's write; it is reported as failed with `conflict_unresolved`.
    case giveUp
}

/// How queued writes settle conflicts on the same field. Changes to different fields are always
/// merged (both kept) without asking.
public enum ConflictPolicy: Sendable {
    /// The server's value stays (the default: the other device's user already saw theirs saved).
    case serverWins
    /// This device's value is written over the server's.
    case clientWins
    /// The app decides, e.g. by asking its user. The queue waits for the answer (this device's
    /// writes stay in order); the client's other calls go on meanwhile.
    case custom(@Sendable (Conflict) async -> ConflictResolution)
}

/// What came of a conflict, as ``QueueEvent/conflict(_:_:)`` reports it.
public struct ConflictReport: Sendable, Equatable {
    /// How it was settled.
    public enum Outcome: Sendable, Equatable {
        /// The two sides changed different fields; both changes were kept.
        case mergedAutomatically
        /// The server's values of the conflicting fields (``Conflict/fields``) were kept.
        case serverWon
        /// This device's values were written over the server's.
        case clientWon
        /// The app's handler merged them.
        case mergedByApp
        /// The handler gave up; the write was dropped (a `.failed` event follows).
        case gaveUp
        /// The object was deleted elsewhere; the write was dropped (a `.failed` event follows).
        case deletedOnServer
    }

    /// The conflict as the handler saw it.
    public let conflict: Conflict
    /// How it was settled.
    public let outcome: Outcome
}

/// The next step for a write that met a 412.
enum ConflictStep {
    /// The write was rewritten against the server's version: send it again.
    case resend
    /// Nothing is left to send; the server's copy (this answer) is the result.
    case settled(TransportResponse)
    case drop(RoostError)
    case retry(reachable: Bool)
}

extension Roost {
    /// Reads the object as it is now and rebases the write on it, field by field.
    func settleConflict(_ operation: QueuedOperation) async -> ConflictStep {
        let current: TransportResponse
        do {
            current = try await send(
                TransportRequest(method: "GET", path: Self.objectPath(operation.collection, operation.guid)),
                owner: .some(operation.owner))
        } catch {
            return .retry(reachable: false)
        }
        if current.status == 404 {
            let conflict = Conflict(
                collection: operation.collection, guid: operation.guid, base: operation.base, mine: nil,
                theirs: [:], theirVersion: 0, fields: [])
            emit(.conflict(operation, ConflictReport(conflict: conflict, outcome: .deletedOnServer)))
            return .drop(
                RoostError(
                    status: 404, code: .notFound,
                    message:
                        "\(operation.collection) \(operation.guid) was deleted on the server after this device read it; this device's change was not applied."
                ))
        }
        guard current.status == 200,
            let document = try? JSONDecoder().decode([String: JSON].self, from: current.body),
            let theirVersion = document["version"]?.intValue
        else { return current.status >= 500 ? .retry(reachable: true) : .drop(RoostError.from(current)) }
        let theirs = MergePatch.appFields(of: document)
        let body = log.body(of: operation).flatMap {
            try? JSONDecoder().decode([String: JSON].self, from: $0)
        }
        let plan = Self.rebase(operation, body: body ?? [:], theirs: theirs, theirVersion: theirVersion)
        let resolution: ConflictResolution
        if plan.conflict.fields.isEmpty && operation.kind != .delete {
            resolution = .clientWins
        } else {
            switch conflictPolicy {
            case .serverWins: resolution = .serverWins
            case .clientWins: resolution = .clientWins
            case .custom(let handler): resolution = await handler(plan.conflict)
            }
        }
        let outcome: ConflictReport.Outcome
        var rewritten = operation
        rewritten.expectedVersion = theirVersion
        switch resolution {
        case .giveUp:
            emit(.conflict(operation, ConflictReport(conflict: plan.conflict, outcome: .gaveUp)))
            return .drop(Self.unresolved(plan.conflict))
        case .serverWins:
            outcome = .serverWon
            if operation.kind == .delete {
                emit(.conflict(operation, ConflictReport(conflict: plan.conflict, outcome: outcome)))
                return .drop(Self.unresolved(plan.conflict))
            }
            rewritten.kind = .patch
            rewritten.body = try? Wire.encoder.encode(
                JSON.object(MergePatch.removing(Set(plan.conflict.fields), from: plan.patch)))
        case .clientWins:
            outcome = plan.conflict.fields.isEmpty ? .mergedAutomatically : .clientWon
            if operation.kind != .delete {
                rewritten.kind = .patch
                rewritten.body = try? Wire.encoder.encode(JSON.object(plan.patch))
            }
        case .merged(let fields):
            outcome = .mergedByApp
            let known = Set(plan.theirsInModel.keys).union(fields.keys)
            rewritten.kind = .patch
            rewritten.body = try? Wire.encoder.encode(
                JSON.object(
                    MergePatch.diff(from: plan.theirsInModel.filter { known.contains($0.key) }, to: fields)))
        }
        emit(.conflict(operation, ConflictReport(conflict: plan.conflict, outcome: outcome)))
        if rewritten.kind == .patch, rewritten.body.map({ $0 == Data("{}".utf8) }) ?? true {
            return .settled(current)
        }
        rewritten.base = plan.theirsInModel
        rewritten.bodyFile = nil
        rewritten.requestKey = UUID().uuidString.lowercased()
        do {
            try log.store(rewritten)
        } catch {
            return .drop(RoostError.storageFailed("store the rebased write", error))
        }
        return .resend
    }

    /// The conflict a write has with the server's fields, and the patch it would send on them.
    static func rebase(
        _ operation: QueuedOperation, body: [String: JSON], theirs: [String: JSON], theirVersion: Int
    ) -> (conflict: Conflict, patch: [String: JSON], theirsInModel: [String: JSON]) {
        let mine: [String: JSON]?
        let patch: [String: JSON]
        let fields: [String]
        switch (operation.kind, operation.base) {
        case (.delete, _):
            (mine, patch, fields) = (nil, [:], [])
        case (.patch, let base?):
            patch = body
            mine = MergePatch.apply(body, to: base)
            fields = MergePatch.conflicts(
                mine: body, theirs: MergePatch.diff(from: base, to: theirs), base: base)
        case (.replace, _):
            // The whole object, read at some version: every field it sets differently is in conflict.
            mine = body
            patch = MergePatch.diff(from: theirs.filter { body[$0.key] != nil }, to: body)
            fields = MergePatch.paths(of: patch)
        default:
            // A patch not made from a read: its fields conflict where the server's differ.
            mine = MergePatch.apply(body, to: theirs)
            patch = body
            fields = MergePatch.paths(of: body).filter {
                MergePatch.value(at: $0, in: theirs) != MergePatch.value(at: $0, in: mine ?? [:])
            }
        }
        let modelKeys = Set(operation.base?.keys ?? [:].keys).union(mine?.keys ?? [:].keys)
        let theirsInModel = theirs.filter { modelKeys.contains($0.key) }
        let conflict = Conflict(
            collection: operation.collection, guid: operation.guid, base: operation.base, mine: mine,
            theirs: theirsInModel, theirVersion: theirVersion, fields: fields)
        return (conflict, patch, theirsInModel)
    }

    static func unresolved(_ conflict: Conflict) -> RoostError {
        let fields = conflict.fields.isEmpty ? "the object" : conflict.fields.joined(separator: ", ")
        return RoostError(
            status: 412, code: RoostError.Code.conflictUnresolved,
            message:
                "\(conflict.collection) \(conflict.guid) was changed elsewhere (\(fields)) after this device read it; this device's write was not applied.",
            details: [
                "collection": .string(conflict.collection), "guid": .string(conflict.guid),
                "fields": .array(conflict.fields.map(JSON.string)),
                "theirVersion": .number(Double(conflict.theirVersion)),
            ])
    }
}
