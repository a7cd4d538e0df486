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

    /// Reads and parses a definition file.
    public static func load(_ path: String) throws(AppDefinitionError) -> AppDefinition {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw AppDefinitionError(
                field: nil, line: nil, column: nil,
                message: "cannot read '\(path)'; check that the file exists and is readable")
        }
        return try AppDefinition.parse(Array(data))
    }
}
