import Foundation
import RoostJSON
import Synchronization

/// The app definition in force, replaced whole on reload so that every request sees one
/// consistent definition.
public final class AppDefinitionSource: Sendable {
    private let current: Mutex<AppDefinition>
    /// The file it came from, re-read by ``reload()``; nil when the server runs without one.
    public let path: String?

    /// A source holding `definition`, loaded from `path` if given.
    public init(_ definition: AppDefinition = AppDefinition(), path: String? = nil) {
        current = Mutex(definition)
        self.path = path
    }

    /// Loads the definition at `path`; throws with the line or field at fault.
    public convenience init(path: String) throws(AppDefinitionError) {
        self.init(try Self.load(path), path: path)
    }

    /// The definition in force now.
    public var definition: AppDefinition { current.withLock { $0 } }

    /// Puts a new definition in force.
    public func replace(with definition: AppDefinition) {
        current.withLock { $0 = definition }
    }

    /// Re-reads the file; a file that fails to load leaves the running definition in force.
    @discardableResult
    public func reload() throws(AppDefinitionError) -> AppDefinition {
        guard let path else { return definition }
        let definition = try Self.load(path)
        replace(with: definition)
        return definition
    }

    /// Reads and parses a definition file and the script modules in the `scripts` folder next
    /// to it.
    public static func load(_ path: String) throws(AppDefinitionError) -> AppDefinition {
        try files(path).parse()
    }

    /// Reads a definition file and the script modules next to it, without parsing the definition.
    public static func files(_ path: String) throws(AppDefinitionError) -> AppDefinitionFiles {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw AppDefinitionError(
                field: nil, line: nil, column: nil,
                message: "cannot read '\(path)'; check that the file exists and is readable")
        }
        let folder = URL(fileURLWithPath: path).deletingLastPathComponent().path
        let modules = try ScriptFolder.modules(in: folder + "/scripts")
        return AppDefinitionFiles(text: Array(data), modules: modules)
    }
}
