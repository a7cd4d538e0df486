import Foundation
import RoostCore
import RoostQuery
import RoostSQLite
import RoostStore

let indexHelp = """
    Manage indexes on JSON fields, so queries on them seek instead of scanning.

    USAGE:
      roost index create COLLECTION FIELD [--data-dir PATH] [--app FILE] [--force]
      roost index drop COLLECTION FIELD [--data-dir PATH]
      roost index list [--data-dir PATH]

    FIELD is a dotted path such as gender or author.name. An index serves eq, lt, lte, gt and gte
    on that field (and sorting by it) in that collection. list and drop work while the server runs;
    create needs the data folder to itself (exit status 75 while a server runs on it): on a running
    server, add the field to "indexes" in roost.json and run 'roost app apply' instead.

    create refuses a collection that holds no objects and that the app definition (--app FILE,
    env ROOST_APP) does not declare, since a misspelt name would index nothing; --force indexes
    it anyway, before its first object.

    EXAMPLE:
      roost index create Celebrity gender
    """

/// `roost index ...`: returns the exit status.
func index(_ arguments: [String]) async -> Int32 {
    guard let action = arguments.first, !["-h", "--help", "help"].contains(action) else {
        print(indexHelp)
        return 0
    }
    var rest = Array(arguments.dropFirst())
    let force = rest.contains("--force")
    rest.removeAll { $0 == "--force" }
    var appPath = ProcessInfo.processInfo.environment["ROOST_APP"].flatMap { $0.isEmpty ? nil : $0 }
    if let flag = rest.firstIndex(of: "--app") {
        guard flag + 1 < rest.count, !rest[flag + 1].hasPrefix("-") else {
            printError("--app needs a value (FILE)\nRun 'roost index --help' for the options.")
            return 64
        }
        appPath = rest[flag + 1]
        rest.removeSubrange(flag...flag + 1)
    }
    guard let (database, names) = databaseAndNames(rest[...], command: "index") else {
        return 64
    }
    let dataDirectory = database.dataDirectory
    if let status = database.requireExisting() { return status }
    // Building an index holds SQLite's write lock for as long as it takes, and a server's writes
    // would fail meanwhile: a running server builds it itself from the app definition instead.
    if action == "create", database.databaseURL == nil,
        let status = lockForAdminCommand(
            dataDirectory, command: "'roost index create'",
            instead:
                "Add the field to the collection's \"indexes\" in roost.json and run 'roost app apply' "
                + "(the server builds it without failing writes), or stop the server first.")
    {
        return status
    }
    do {
        return try await database.withStorage { storage in
            let store = storage.objectStore
            switch (action, names.count) {
            case ("list", 0):
                let indexes = try await store.fieldIndexes()
                if indexes.isEmpty { say("no field indexes") }
                for index in indexes { say("\(index.collection)\t\(index.field)") }
            case ("create", 2), ("drop", 2):
                guard ObjectService.isValidCollection(names[0]) else {
                    printError(
                        "'\(names[0])' is not a collection name: a letter, then letters, digits or '_'")
                    return 64
                }
                guard let field = FieldPath(names[1]) else {
                    printError("'\(names[1])' is not a field: identifiers joined by '.', such as author.name")
                    return 64
                }
                if action == "create" {
                    if !force,
                        let status = try await refuseUnknownCollection(
                            names[0], store: store, appPath: appPath)
                    {
                        return status
                    }
                    let started = Date()
                    say("indexing \(names[0]).\(field) ...")
                    try await store.createIndex(collection: names[0], field: field)
                    say(
                        String(
                            format: "created the index on %@.%@ in %.1f s", names[0], field.description,
                            Date().timeIntervalSince(started)))
                } else if try await store.dropIndex(collection: names[0], field: field) {
                    say("dropped the index on \(names[0]).\(field)")
                } else {
                    printError("there is no index on \(names[0]).\(field)")
                    return 67
                }
            default:
                printError(
                    "usage: roost index create|drop COLLECTION FIELD, or roost index list\nRun 'roost index --help' for more."
                )
                return 64
            }
            return 0
        }
    } catch {
        printError("\(error)")
        return exitStatus(for: error)
    }
}

/// The exit status of `roost index create` on a collection nobody has heard of.
let unknownCollectionExitStatus: Int32 = 67

/// Refuses (printing why, returning the exit status) a collection that holds no objects and that
/// the app definition does not declare: most likely a misspelt name, which would index nothing.
private func refuseUnknownCollection(_ collection: String, store: any ObjectStore, appPath: String?)
    async throws -> Int32?
{
    // Without a definition, the built-in collections (FFUser, FFUserGroup) are still known.
    var declared = AppDefinition().declares(collection)
    if let appPath, !declared {
        do {
            declared = try AppDefinitionSource.load(appPath).declares(collection)
        } catch {
            printError("\(appPath): \(error)")
            return 65
        }
    }
    guard !declared, try await store.list(ListRequest(collection: collection, count: 1)).documents.isEmpty
    else { return nil }
    // Naming the collections that exist is a hint SQLite's skip scan gives cheaply.
    let hint =
        try (store as? SQLiteObjectStore).map { store in
            let known = try store.collectionNames()
            return known.isEmpty
                ? "The database holds no objects yet."
                : "Collections with objects: \(known.prefix(20).joined(separator: ", "))\(known.count > 20 ? ", …" : "")."
        } ?? ""
    printError(
        "there is no collection '\(collection)': it holds no objects"
            + (appPath.map { " and \($0) does not declare it" }
                ?? " and is not declared (--app FILE checks the server's app definition)")
            + ". \(hint) Check the name, or pass --force to index it before its first object.")
    return unknownCollectionExitStatus
}

extension SQLiteObjectStore {
    /// The names of the collections that hold objects, in order: one index seek per name (a skip
    /// scan), not a pass over every object.
    fileprivate func collectionNames() throws -> [String] {
        try database.read { connection in
            try connection.query(
                """
                WITH RECURSIVE names(name) AS (
                    SELECT min(collection) FROM objects
                    UNION ALL
                    SELECT (SELECT min(collection) FROM objects WHERE collection > name) FROM names
                    WHERE name IS NOT NULL)
                SELECT name FROM names WHERE name IS NOT NULL
                """
            ) { $0.text(0) ?? "" }
        }
    }
}
