import RoostCore
import RoostJSON
import RoostStore

/// One ASYNC handler run a round has to do: on a new change, or a retry that came due.
struct AsyncRun: Sendable {
    let handler: ScriptHandler
    let change: Change
    /// The retry this run is, or nil for a new change's run.
    let retry: FailedRun?
    /// Who made the change: runs take turns by it.
    let owner: String

    /// The object a run is about: one object's runs run one at a time, in log order.
    var object: String { change.collection + "/" + change.guid }

    init(handler: ScriptHandler, change: Change, retry: FailedRun? = nil) {
        self.handler = handler
        self.change = change
        self.retry = retry
        owner = Self.owner(of: change)
    }

    /// The user who made the change (its `updatedBy`, or for a delete the deleter the log
    /// recorded); empty when none did (anonymous callers, the system, administrators' commands).
    static func owner(of change: Change) -> String {
        if change.operation == .delete { return change.deletedBy ?? "" }
        guard let document = change.document, case .object(let object)? = try? JSONParser.parse(document)
        else {
            return ""
        }
        return object["updatedBy"]?.stringValue ?? ""
    }
}

/// The order a round's runs start in: owners take turns (each owner's runs in the order given),
/// and a run starts only when every earlier run of its object has finished. So one owner's flood
/// of events waits behind itself: another owner's run starts within `owners − 1` starts of the
/// moment its object is free, however many runs the flood has.
struct AsyncRunTurns {
    private let runs: [AsyncRun]
    /// Each owner's runs not started yet, in order.
    private var waiting: [String: [Int]] = [:]
    /// Owners with runs not started yet, in the order they take turns; `turn` is whose is next.
    private var rotation: [String] = []
    private var turn = 0
    /// Each object's runs not finished yet, in order: only the first may run.
    private var unfinished: [String: [Int]] = [:]
    private var running: Set<String> = []

    init(_ runs: [AsyncRun]) {
        self.runs = runs
        for (index, run) in runs.enumerated() {
            if waiting[run.owner] == nil { rotation.append(run.owner) }
            waiting[run.owner, default: []].append(index)
            unfinished[run.object, default: []].append(index)
        }
    }

    /// The next run to start, by owners' turns; nil when every waiting run's object is busy
    /// with an earlier run (or none waits).
    mutating func next() -> Int? {
        for step in 0..<rotation.count {
            let position = (turn + step) % rotation.count
            let owner = rotation[position]
            guard let pending = waiting[owner],
                let found = pending.firstIndex(where: { startable($0) })
            else { continue }
            let index = pending[found]
            var rest = pending
            rest.remove(at: found)
            running.insert(runs[index].object)
            if rest.isEmpty {
                waiting[owner] = nil
                rotation.remove(at: position)
                turn = rotation.isEmpty ? 0 : position % rotation.count
            } else {
                waiting[owner] = rest
                turn = (position + 1) % rotation.count
            }
            return index
        }
        return nil
    }

    /// The run `index` (started by ``next()``) ended: the next run of its object may start.
    mutating func finished(_ index: Int) {
        let object = runs[index].object
        running.remove(object)
        unfinished[object]?.removeFirst()
        if unfinished[object]?.isEmpty == true { unfinished[object] = nil }
    }

    private func startable(_ index: Int) -> Bool {
        let object = runs[index].object
        return !running.contains(object) && unfinished[object]?.first == index
    }
}
