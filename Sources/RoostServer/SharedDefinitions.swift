import Foundation
import RoostCore
import RoostHTTP
import RoostStore
import Synchronization

/// Keeps an instance's app definition the one stored in the database it shares with others:
/// `roost app apply --database URL`, or a SIGHUP'd instance's file, stores a definition with its
/// script modules (``AppDefinitionFiles/bundle``), and every instance puts it in force within a
/// second (a notification, or the listener's re-check).
final class SharedDefinitionFollower: Sendable {
    private let store: any SharedDefinitionStore
    private let definitions: AppDefinitionSource
    private let logger: Logger
    /// The revision in force here; 0 before any was adopted.
    private let revision = Mutex<Int64>(0)
    private let follower = Mutex<Task<Void, Never>?>(nil)
    private let wake: AsyncStream<Void>.Continuation
    private let hints: AsyncStream<Void>

    init(store: any SharedDefinitionStore, definitions: AppDefinitionSource, logger: Logger) {
        self.store = store
        self.definitions = definitions
        self.logger = logger
        (hints, wake) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
    }

    /// At start: an instance started with a definition file stores it (so instances started
    /// with the same file agree, and a changed file wins); one without takes the stored
    /// definition, if there is one.
    func adopt() async throws {
        if let path = definitions.path {
            let files = try AppDefinitionSource.files(path)
            let stored = try await store.storeDefinition(files.bundle, at: Self.now())
            revision.withLock { $0 = stored }
        } else if let (stored, text) = try await store.storedDefinition() {
            definitions.replace(with: try AppDefinitionFiles(stored: text).parse())
            revision.withLock { $0 = stored }
        }
    }

    /// Follows the stored definition from now on; `install` prepares what a definition needs
    /// (indexes, groups) before it is put in force.
    func start(install: @escaping @Sendable (AppDefinition) async throws -> Void) {
        let wake = self.wake
        store.observeChanges { wake.yield() }
        let task = Task { [self] in
            for await _ in hints {
                await catchUp(install: install)
            }
        }
        follower.withLock { $0 = task }
    }

    /// Stores the definition file and its scripts for every instance (SIGHUP, `roost app apply`
    /// on a data folder), then puts them in force here at once.
    func publish(path: String, install: @Sendable (AppDefinition) async throws -> Void) async throws
        -> AppDefinition
    {
        let files = try AppDefinitionSource.files(path)
        let definition = try files.parse()
        try await install(definition)
        let stored = try await store.storeDefinition(files.bundle, at: Self.now())
        revision.withLock { $0 = max($0, stored) }
        definitions.replace(with: definition)
        return definition
    }

    /// Stores a definition changed at runtime (`executeFFDL`) for every instance, then puts it in
    /// force here; `install` has prepared it.
    func publish(_ files: AppDefinitionFiles, definition: AppDefinition) async throws {
        let stored = try await store.storeDefinition(files.bundle, at: Self.now())
        revision.withLock { $0 = max($0, stored) }
        definitions.replace(with: definition)
    }

    /// Puts the stored definition in force if it is newer than the one here.
    private func catchUp(install: @Sendable (AppDefinition) async throws -> Void) async {
        do {
            guard let (stored, text) = try await store.storedDefinition(),
                stored > revision.withLock({ $0 })
            else { return }
            let definition = try AppDefinitionFiles(stored: text).parse()
            try await install(definition)
            let adopted = revision.withLock { current in
                guard stored > current else { return false }
                current = stored
                return true
            }
            if adopted {
                definitions.replace(with: definition)
                logger.info("app definition revision \(stored) from the database is in force")
            }
        } catch {
            logger.error(
                "the app definition stored in the database was not put in force; the running one stays: \(error)"
            )
        }
    }

    /// Stops following; returns once the follower has ended.
    func stop() async {
        wake.finish()
        let task = follower.withLock { task in
            defer { task = nil }
            return task
        }
        task?.cancel()
        await task?.value
    }

    private static func now() -> Int64 { Int64(Date().timeIntervalSince1970 * 1000) }
}
