#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Reads an app's script modules: every `*.js` file under its `scripts` folder, by module id
/// (`scripts/<path without .js>`), within the limits of ``ScriptSettings``.
public enum ScriptFolder {
    /// The modules under `directory`; none when it does not exist. Dotfiles and dot-folders are
    /// skipped, other files than `*.js` ignored; a symbolic link that leads out of the folder, a
    /// file over a limit, or one that is not UTF-8 is refused with its path. `label` is how errors
    /// name the folder (`scripts`, or `ff-scripts` when importing).
    public static func modules(in directory: String, label: String = "scripts") throws(AppDefinitionError)
        -> [String: String]
    {
        var status = stat()
        guard lstat(directory, &status) == 0 else {
            if errno == ENOENT { return [:] }
            throw .at(label, "cannot read the folder: \(String(cString: strerror(errno)))")
        }
        guard let root = realPath(directory), isDirectory(root) else {
            throw .at(label, "not a folder; the app's script files go in a folder named \(label)")
        }
        var reader = Reader(root: root, label: label)
        try reader.walk(folder: [])
        return reader.modules
    }

    private struct Reader {
        let root: String
        let label: String
        var modules: [String: String] = [:]
        var total = 0

        mutating func walk(folder: [String]) throws(AppDefinitionError) {
            let path = ([root] + folder).joined(separator: "/")
            for name in try entries(of: path, shownAs: place(folder)) {
                let relative = folder + [name]
                let shown = place(relative)
                var target = path + "/" + name
                var status = stat()
                guard lstat(target, &status) == 0 else { throw unreadable(shown) }
                if status.st_mode & S_IFMT == S_IFLNK {
                    guard let resolved = ScriptFolder.realPath(target), resolved.hasPrefix(root + "/") else {
                        throw .at(shown, "a symbolic link that leads out of the \(label) folder")
                    }
                    target = resolved
                    guard stat(target, &status) == 0 else { throw unreadable(shown) }
                }
                if status.st_mode & S_IFMT == S_IFDIR {
                    guard folder.count < ScriptSettings.maximumModuleFolderDepth else {
                        throw .at(
                            shown,
                            "folders nest more than \(ScriptSettings.maximumModuleFolderDepth) deep inside \(label)/"
                        )
                    }
                    try walk(folder: relative)
                } else if name.hasSuffix(".js") {
                    guard status.st_mode & S_IFMT == S_IFREG else { throw .at(shown, "not a regular file") }
                    try add(relative, from: target, size: Int(status.st_size))
                }
            }
        }

        private mutating func add(_ relative: [String], from path: String, size: Int)
            throws(AppDefinitionError)
        {
            let shown = place(relative)
            let id = ScriptSettings.modulePrefix + relative.joined(separator: "/").dropLast(3)
            guard ScriptSettings.isValidModuleID(id) else {
                throw .at(
                    shown,
                    "file and folder names in \(label)/ are letters, digits, '_', '-' and '.', up to 128 of them, not starting with '.'"
                )
            }
            guard modules.count < ScriptSettings.maximumModules else {
                throw .at(label, "more than \(ScriptSettings.maximumModules) script files")
            }
            guard size <= ScriptSettings.maximumModuleBytes,
                var bytes = ScriptFolder.contents(of: path, limit: ScriptSettings.maximumModuleBytes)
            else {
                if size > ScriptSettings.maximumModuleBytes {
                    throw .at(shown, "larger than 1 MiB, the most one script file may hold")
                }
                throw unreadable(shown)
            }
            guard bytes.count <= ScriptSettings.maximumModuleBytes else {
                throw .at(shown, "larger than 1 MiB, the most one script file may hold")
            }
            total += bytes.count
            guard total <= ScriptSettings.maximumTotalModuleBytes else {
                throw .at(shown, "the script files add up to more than 8 MiB")
            }
            // A byte order mark is not JavaScript.
            if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes.removeFirst(3) }
            guard let source = String(validating: bytes, as: UTF8.self) else {
                throw .at(shown, "not UTF-8 text")
            }
            modules[id] = source
        }

        func place(_ relative: [String]) -> String { ([label] + relative).joined(separator: "/") }

        func unreadable(_ shown: String) -> AppDefinitionError {
            .at(shown, "cannot read it: \(String(cString: strerror(errno)))")
        }

        /// The names in a folder, sorted, without dotfiles.
        func entries(of path: String, shownAs shown: String) throws(AppDefinitionError) -> [String] {
            guard let folder = opendir(path) else { throw unreadable(shown) }
            defer { closedir(folder) }
            var names: [String] = []
            while let entry = readdir(folder) {
                let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                    String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
                }
                if !name.hasPrefix(".") { names.append(name) }
            }
            return names.sorted()
        }
    }

    static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    static func isDirectory(_ path: String) -> Bool {
        var status = stat()
        return stat(path, &status) == 0 && status.st_mode & S_IFMT == S_IFDIR
    }

    /// At most `limit + 1` bytes of a file, so a file that grew after its size was read still
    /// shows as too large; nil when it cannot be read.
    static func contents(of path: String, limit: Int) -> [UInt8]? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while bytes.count <= limit {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count >= 0 else { return nil }
            if count == 0 { break }
            bytes.append(contentsOf: chunk.prefix(count))
        }
        return bytes
    }
}
