import RoostJSON

/// What an app definition is made of: the text of `roost.json` and the sources of its script
/// modules. Instances that share a database store it as one bundle, so every one of them runs
/// the same definition and the same scripts.
public struct AppDefinitionFiles: Sendable, Equatable {
    public var text: [UInt8]
    /// Source by module id (`scripts/Name`).
    public var modules: [String: String]

    public init(text: [UInt8], modules: [String: String] = [:]) {
        self.text = text
        self.modules = modules
    }

    /// The definition these files make; throws with the field, line or file at fault.
    public func parse() throws(AppDefinitionError) -> AppDefinition {
        try AppDefinition.parse(text, modules: modules)
    }

    /// The key that marks a bundle. `roost.json` refuses it, so no definition text is mistaken
    /// for a bundle.
    static let bundleMarker = "roostDefinitionBundle"
    static let bundleVersion: Int64 = 1

    /// One JSON document, written the same way for the same files (modules sorted by id), so an
    /// unchanged definition stores as unchanged:
    /// `{"roostDefinitionBundle": 1, "definition": "<roost.json>", "modules": {"scripts/X": "…"}}`.
    public var bundle: [UInt8] {
        let modules = self.modules.sorted { $0.key < $1.key }.map {
            (key: $0.key, value: JSONValue.string($0.value))
        }
        return JSONWriter.bytes(
            .object(
                JSONObject(uniqueMembers: [
                    (Self.bundleMarker, .integer(Self.bundleVersion)),
                    ("definition", .string(String(decoding: text, as: UTF8.self))),
                    ("modules", .object(JSONObject(uniqueMembers: modules))),
                ])))
    }

    /// Reads what ``bundle`` wrote, or the bare `roost.json` text that instances stored before
    /// definitions carried scripts.
    public init(stored bytes: [UInt8]) throws(AppDefinitionError) {
        guard case .object(let top)? = try? JSONParser.parse(bytes), let marker = top[Self.bundleMarker]
        else {
            self.init(text: bytes)
            return
        }
        guard marker.integerValue == Self.bundleVersion else {
            throw .at(
                Self.bundleMarker,
                "the stored definition was written by a newer version of Roost; upgrade this instance")
        }
        guard let text = top["definition"]?.stringValue, case .object(let sources)? = top["modules"] else {
            throw .at(Self.bundleMarker, "the stored definition is damaged; apply it again")
        }
        var modules: [String: String] = [:]
        for (id, source) in sources.members {
            guard let source = source.stringValue else {
                throw .at(Self.bundleMarker, "the stored definition is damaged; apply it again")
            }
            modules[id] = source
        }
        self.init(text: Array(text.utf8), modules: modules)
    }
}
