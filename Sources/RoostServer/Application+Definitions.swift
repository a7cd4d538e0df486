import RoostCore

extension Application {
    /// Puts an `executeFFDL` change in force: prepared (indexes, groups, scripts) first, then
    /// stored for every instance when the database is shared, else in force on this one alone.
    /// A reload of the definition file (SIGHUP, `roost app apply`) or a restart with it replaces it.
    func apply(_ change: FFDLChange) async throws {
        try await install(change.definition)
        if let sharedDefinitions {
            let files = AppDefinitionFiles(text: change.text, modules: change.definition.scripts.modules)
            try await sharedDefinitions.publish(files, definition: change.definition)
        } else {
            definitions.replace(with: change.definition)
        }
    }
}
