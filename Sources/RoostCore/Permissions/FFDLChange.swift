import RoostJSON

/// A change to the app definition in force, written in FFDL (FatFractal's `executeFFDL`): the
/// statements `roost app import` translates, applied to the definition's own `roost.json` text,
/// all or nothing. A statement the import would not translate refuses the whole change.
public struct FFDLChange: Sendable {
    /// The most FFDL one change carries, in UTF-8 bytes.
    public static let maximumBytes = 64 * 1024

    /// What became of each statement.
    public let lines: [FFDLImport.Line]
    /// The changed `roost.json`.
    public let text: [UInt8]
    /// The changed definition, parsed and checked as `roost app check` would.
    public let definition: AppDefinition

    /// Applies `ffdl` to `current`; throws 413 `body_too_large`, 400 `ffdl_unsupported` (with
    /// every statement not translated) or 400 `ffdl_invalid` (the result is no valid definition).
    public init(applying ffdl: String, to current: AppDefinition) throws(RoostError) {
        guard ffdl.utf8.count <= Self.maximumBytes else {
            throw RoostError(
                status: 413, code: .bodyTooLarge,
                message: "One executeFFDL takes at most \(Self.maximumBytes >> 10) KiB of FFDL.")
        }
        let translation = FFDLImport(ffdl: ffdl)
        var refused = translation.lines.filter { $0.outcome == .notTranslated }
        refused += Self.inlineCode(in: translation)
        guard refused.isEmpty else {
            let list = refused.prefix(50).map { line in
                JSONValue.object(
                    JSONObject(uniqueMembers: [
                        ("line", .integer(Int64(line.number))),
                        ("text", .string(String(line.text.prefix(200)))),
                        ("reason", .string(line.reason)),
                    ]))
            }
            throw RoostError(
                status: 400, code: .ffdlUnsupported,
                message:
                    "Roost does not carry out \(refused.count == 1 ? "this FFDL statement" : "\(refused.count) of these FFDL statements") (see details); nothing was changed.",
                details: JSONObject(uniqueMembers: [("statements", .array(list))]))
        }
        var top = JSONObject()
        if let source = current.sourceText, case .object(let parsed)? = try? JSONParser.parse(source) {
            top = parsed
        }
        Self.merge(translation, into: &top)
        var output = ""
        FFDLImport.write(.object(top), indent: "", into: &output)
        let text = Array((output + "\n").utf8)
        do {
            definition = try AppDefinition.parse(text, modules: current.scripts.modules)
        } catch {
            throw RoostError(
                status: 400, code: .ffdlInvalid,
                message: "After this FFDL the app definition would not be valid: \(error.description)")
        }
        self.text = text
        lines = translation.lines
    }

    /// Handlers and extensions whose code is inline rather than a function of the app's modules:
    /// at runtime only the operator's script files run, never code sent over HTTP.
    static func inlineCode(in translation: FFDLImport) -> [FFDLImport.Line] {
        var lines: [FFDLImport.Line] = []
        for key in ["handlers", "extensions"] {
            for (name, value) in translation.definition[key]?.objectValue?.members ?? []
            where value.objectValue?["code"] != nil {
                let line = translation.lines.first { $0.reason.hasPrefix("\(key).\(name):") }
                lines.append(
                    FFDLImport.Line(
                        number: line?.number ?? 0, text: line?.text ?? name, outcome: .notTranslated,
                        reason:
                            "executeFFDL adds handlers and extensions that call a function of the app's own script modules (require('scripts/M').f()), never inline code"
                    ))
            }
        }
        return lines.sorted { $0.number < $1.number }
    }

    /// Settings and handlers or extensions of the same name are replaced; a collection's rules
    /// are replaced operation by operation; origins are added; dropped collections go.
    static func merge(_ translation: FFDLImport, into top: inout JSONObject) {
        let fragment = translation.definition
        var collections = top["collections"]?.objectValue ?? JSONObject()
        for name in translation.droppedCollections { collections[name] = nil }
        for (name, value) in fragment["collections"]?.objectValue?.members ?? [] {
            var policy = collections[name]?.objectValue ?? JSONObject()
            if let rules = value.objectValue?["rules"]?.objectValue {
                var merged = policy["rules"]?.objectValue ?? JSONObject()
                for (operation, rule) in rules.members { merged[operation] = rule }
                policy["rules"] = .object(merged)
            }
            collections[name] = .object(policy)
        }
        top["collections"] = collections.isEmpty && top["collections"] == nil ? nil : .object(collections)
        for key in ["settings", "handlers", "extensions"] {
            guard let additions = fragment[key]?.objectValue else { continue }
            var merged = top[key]?.objectValue ?? JSONObject()
            for (name, value) in additions.members { merged[name] = value }
            top[key] = .object(merged)
        }
        if let origins = fragment["cors"]?.objectValue?["allowedOrigins"]?.arrayValue {
            var cors = top["cors"]?.objectValue ?? JSONObject()
            var merged = cors["allowedOrigins"]?.arrayValue ?? []
            for origin in origins where !merged.contains(origin) { merged.append(origin) }
            cors["allowedOrigins"] = .array(merged)
            top["cors"] = .object(cors)
        }
    }
}

extension FFDLChange {
    /// What `POST /ff/metadata` and a script's `ff.executeFFDL` answer: each statement's fate.
    public var summary: JSONValue {
        .object(
            JSONObject(uniqueMembers: [
                (
                    "statements",
                    .array(
                        lines.map { line in
                            .object(
                                JSONObject(uniqueMembers: [
                                    ("line", .integer(Int64(line.number))), ("text", .string(line.text)),
                                    ("outcome", .string(line.outcome.rawValue)),
                                    ("reason", .string(line.reason)),
                                ]))
                        })
                )
            ]))
    }
}

/// Puts an FFDL change in force: in this instance, and in every instance that shares its database.
public protocol AppDefinitionChanging: Sendable {
    /// Applies `ffdl` to the definition in force; `caller` is named in the log line that records it.
    func execute(ffdl: String, by caller: Principal) async throws -> FFDLChange
}
