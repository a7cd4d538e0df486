import RoostCore
import RoostHTTP
import RoostJSON
import Synchronization

/// `/ff/metadata`: FatFractal's app metadata and `executeFFDL`.
///
/// `GET` answers every caller (FatFractal's pages read it before anyone logs in) with the
/// collections, object types and settings; administrators (the system user included) also see each
/// collection's rules and the handlers and extensions. `POST {"ffdl": "…"}` is administration: the
/// `--admin-allow` addresses and an administrator's credentials, then the change is put in force.
struct MetadataRoutes: Sendable {
    static let path = "/ff/metadata"
    let definitions: AppDefinitionSource
    let changes: any AppDefinitionChanging

    func register(in routes: APIRoutes) {
        routes.api.on(.get, Self.path) { _, context in
            let metadata = FatFractalMetadata.metadata(
                of: definitions.definition, administrator: context.principal?.isAdmin == true)
            return Response.json(200, JSONWriter.bytes(metadata))
        }
        routes.administrators.on(.post, Self.path) { request, context in
            let body = try ObjectRoutes.bodyObject(request)
            guard let value = body["ffdl"] else { throw RoostError.missingField("ffdl") }
            guard case .string(let ffdl) = value else {
                throw RoostError.invalidField(
                    "ffdl", "'ffdl' is FFDL text: statements separated by newlines.")
            }
            let change = try await changes.execute(ffdl: ffdl, by: try context.user())
            return Response.json(200, JSONWriter.bytes(change.summary))
        }
    }
}

/// Runs FFDL changes one at a time on this instance (two at once would each start from the same
/// definition and the later would undo the earlier), through `apply`, which puts the result in
/// force here and stores it for every instance sharing the database.
final class DefinitionChanges: AppDefinitionChanging {
    typealias Apply = @Sendable (FFDLChange) async throws -> Void
    private let definitions: AppDefinitionSource
    private let logger: Logger
    private let apply = Mutex<Apply?>(nil)
    /// The change running or last run; the next waits for it.
    private let last = Mutex<Task<Void, Never>?>(nil)

    init(definitions: AppDefinitionSource, logger: Logger) {
        self.definitions = definitions
        self.logger = logger
    }

    /// Set once the application can install definitions.
    func connect(_ apply: @escaping Apply) { self.apply.withLock { $0 = apply } }

    func execute(ffdl: String, by caller: Principal) async throws -> FFDLChange {
        let definitions = definitions
        let apply = apply.withLock { $0 }
        let logger = logger
        let run = last.withLock { last -> Task<FFDLChange, any Error> in
            let previous = last
            let run = Task {
                await previous?.value
                let change = try FFDLChange(applying: ffdl, to: definitions.definition)
                guard let apply else {
                    throw RoostError.scriptServiceNotConfigured("executeFFDL", service: "a running server")
                }
                try await apply(change)
                logger.info(
                    "executeFFDL by \(caller.userGuid) changed the app definition (\(change.lines.count) statements)"
                )
                return change
            }
            last = Task { _ = await run.result }
            return run
        }
        return try await run.value
    }
}
