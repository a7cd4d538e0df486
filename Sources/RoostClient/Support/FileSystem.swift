import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Durable file writes: what survives a crash is either the old file or the whole new one.
enum FileSystem {
    /// Writes `data` to a temporary file beside `path`, flushes it to disk and renames it over
    /// `path`, then flushes the folder so the rename itself survives a power cut.
    static func writeAtomically(_ data: Data, to path: String, permissions: mode_t = 0o600) throws {
        let temporary = path + ".tmp-\(getpid())"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC, permissions)
        guard descriptor >= 0 else { throw posixError("create \(temporary)") }
        do {
            try writeAll(data, to: descriptor)
            guard fsync(descriptor) == 0 else { throw posixError("flush \(temporary)") }
            close(descriptor)
        } catch {
            close(descriptor)
            unlink(temporary)
            throw error
        }
        guard rename(temporary, path) == 0 else {
            unlink(temporary)
            throw posixError("rename \(temporary)")
        }
        syncFolder(of: path)
    }

    static func writeAll(_ data: Data, to descriptor: Int32) throws {
        try data.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    throw posixError("write")
                }
                offset += written
            }
        }
    }

    static func syncFolder(of path: String) {
        let folder = (path as NSString).deletingLastPathComponent
        let descriptor = open(folder.isEmpty ? "." : folder, O_RDONLY)
        if descriptor >= 0 {
            fsync(descriptor)
            close(descriptor)
        }
    }

    /// Creates a folder (and its parents) readable by its owner only.
    static func makeFolder(_ path: String) throws {
        try FileManager.default.createDirectory(
            atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    }

    static func posixError(_ what: String) -> RoostError {
        let reason = String(cString: strerror(errno))
        return RoostError(
            status: nil, code: RoostError.Code.storageFailed,
            message: "Could not \(what): \(reason). Check the storage folder's permissions and free space.")
    }
}
