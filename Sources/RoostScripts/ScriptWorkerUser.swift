#if canImport(Glibc)
    import Glibc
#endif

/// The user and group a script worker drops to before it runs a script (see the worker's
/// `roost_worker_sandbox`): never root when the server is.
public struct ScriptWorkerUser: Sendable, Equatable {
    public let uid: UInt32
    public let gid: UInt32

    public init(uid: UInt32, gid: UInt32) {
        self.uid = uid
        self.gid = gid
    }

    /// The system's `nobody` (65534 when the system has no such entry).
    public static let nobody = named("nobody") ?? ScriptWorkerUser(uid: 65534, gid: 65534)

    /// `nobody` when this process runs as root, else nil: an ordinary user cannot switch.
    public static var defaultForThisProcess: ScriptWorkerUser? { geteuid() == 0 ? nobody : nil }

    /// The user `name` and its primary group; nil for a name the system does not know, or root.
    public static func named(_ name: String) -> ScriptWorkerUser? {
        var entry = passwd()
        var found: UnsafeMutablePointer<passwd>?
        var buffer = [CChar](repeating: 0, count: 16 << 10)
        guard getpwnam_r(name, &entry, &buffer, buffer.count, &found) == 0, found != nil, entry.pw_uid != 0
        else { return nil }
        return ScriptWorkerUser(uid: entry.pw_uid, gid: entry.pw_gid)
    }
}
