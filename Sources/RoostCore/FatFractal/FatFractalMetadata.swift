import RoostJSON

/// FatFractal's app metadata (`GET /ff/metadata`, a script's `ff.getAppMetaData()`), built from
/// the app definition in force: `collectionResources`, `objectTypes` and `settings` for every
/// caller, as FatFractal's pages read them before anyone logs in; each collection's rules and the
/// app's handlers and extensions for administrators and system scripts only.
public enum FatFractalMetadata {
    /// The FatFractal settings Roost has an answer for, as FatFractal wrote them: strings
    /// `"true"`/`"false"`. The ones Roost's behaviour fixes say what it does.
    static func settings(_ settings: AppDefinition.Settings) -> JSONObject {
        func flag(_ value: Bool) -> JSONValue { .string(value ? "true" : "false") }
        return JSONObject(uniqueMembers: [
            // Users log in on registration unless the definition requires a verified address.
            ("ActivateUsersOnReg", flag(settings.emailVerification != .required)),
            ("AllowAutoRegistration", flag(settings.allowAutoRegistration)),
            ("AllowNewCollections", flag(settings.allowNewCollections)),
            ("AllowNewMembers", flag(true)),
            ("AllowNewObjectTypes", flag(true)),
            ("ETaggingEnabled", flag(true)),
            ("PushIsInactive", flag(settings.pushInactive)),
        ])
    }

    /// The built-in object types' members, as FatFractal's own definition declares them.
    static let builtInTypes: [(name: String, fields: [(String, String, String?)])] = [
        (
            AccountService.userCollection,
            [
                ("userName", "STRING", nil), ("firstName", "STRING", nil), ("lastName", "STRING", nil),
                ("email", "STRING", nil), ("active", "BOOLEAN", nil),
                ("groups", "GRABBAG", "/" + AppDefinition.groupCollection),
            ]
        ),
        (
            AppDefinition.groupCollection,
            [("groupName", "STRING", nil), ("users", "GRABBAG", "/" + AccountService.userCollection)]
        ),
    ]

    /// The metadata; `administrator` adds what is not public.
    public static func metadata(of definition: AppDefinition, administrator: Bool) -> JSONValue {
        let builtIn = builtInTypes.map(\.name)
        let declared = definition.collections.keys.filter { $0 != "*" && !builtIn.contains($0) }.sorted()
        var types: [JSONValue] = builtInTypes.map { type in
            objectType(
                type.name,
                fields: type.fields.map { name, kind, bag in
                    var field = JSONObject(uniqueMembers: [
                        ("fieldName", .string(name)), ("memberType", .string(kind)),
                    ])
                    if let bag { field["collectionName"] = .string(bag) }
                    return .object(field)
                })
        }
        // Roost is schemaless: a collection's objects are of its own type, with no declared members.
        types += declared.map { objectType($0, fields: []) }
        let collections = (builtIn + declared).map { name in
            var resource = JSONObject(uniqueMembers: [
                ("collectionName", .string("/" + name)), ("objectTypeNames", .array([.string(name)])),
            ])
            if administrator { resource["permissions"] = .object(permissions(of: name, in: definition)) }
            return JSONValue.object(resource)
        }
        var result = JSONObject(uniqueMembers: [
            ("collectionResources", .array(collections)), ("objectTypes", .array(types)),
            ("settings", .object(settings(definition.settings))),
        ])
        if administrator { addScripts(definition.scripts, to: &result) }
        return .object(result)
    }

    private static func objectType(_ name: String, fields: [JSONValue]) -> JSONValue {
        .object(JSONObject(uniqueMembers: [("objectTypeName", .string(name)), ("fields", .array(fields))]))
    }

    /// Each operation's rule as Roost applies it (declared, `*`, or the default).
    private static func permissions(of collection: String, in definition: AppDefinition) -> JSONObject {
        let (policy, defaults) = definition.policy(for: collection)
        return JSONObject(
            uniqueMembers: AppDefinition.Operation.allCases.map { operation in
                (operation.rawValue, .string(policy.resolved(operation, defaults: defaults).text))
            })
    }

    private static func addScripts(_ scripts: ScriptSettings, to result: inout JSONObject) {
        func entry(_ entry: ScriptEntry) -> JSONValue {
            if let module = entry.module, let function = entry.function {
                return .string("\(module).\(function)")
            }
            return .string("code")
        }
        result["eventHandlers"] = .array(
            scripts.handlers.map { handler in
                .object(
                    JSONObject(uniqueMembers: [
                        ("name", .string(handler.name)),
                        ("collectionName", .string("/" + handler.collection)),
                        ("phase", .string(handler.phase.rawValue.uppercased())),
                        (
                            "events",
                            .array(
                                ScriptHandler.Event.allCases.filter(handler.events.contains).map {
                                    .string($0.rawValue.uppercased())
                                })
                        ),
                        ("runAs", .string(handler.rights.rawValue)), ("script", entry(handler.entry)),
                    ]))
            })
        result["extensionResources"] = .array(
            scripts.extensions.keys.sorted().compactMap { name in
                scripts.extensions[name].map { found in
                    .object(
                        JSONObject(uniqueMembers: [
                            ("extensionName", .string("/" + name)), ("secured", .bool(found.secured)),
                            ("runAs", .string(found.rights.rawValue)), ("script", entry(found.entry)),
                        ]))
                }
            })
    }
}
