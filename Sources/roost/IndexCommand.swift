import Foundation
import RoostCore
import RoostQuery
import RoostStore

let indexHelp = """
    Manage indexes on JSON fields, so queries on them seek instead of scanning.

    USAGE:
      roost index create COLLECTION FIELD [--data-dir PATH]
      roost index drop COLLECTION FIELD [--data-dir PATH]
      roost index list [--data-dir PATH]

    FIELD is a dotted path such as gender or author.name. An index serves eq, lt, lte, gt and gte
    on that field (and sorting by it) in that collection. list and drop work while the server runs;
    create needs the data folder to itself (exit status 75 while a server runs on it): on a running
    server, add the field to "indexes" in roost.json and run 'roost app apply' instead.

    EXAMPLE:
      roost index create Celebrity gender
    """

/// `roost index ...`: returns the exit status.
func index(_ arguments: [String]) async -> Int32 {
    guard let action = arguments.first, !["-h", "--help", "help"].contains(action) else {
        print(indexHelp)
        return 0
    }
    guard let (dataDirectory, names) = dataDirectoryAndNames(arguments.dropFirst(), command: "index") else {
        return 64
    }
    guard FileManager.default.fileExists(atPath: dataDirectory) else {
        printError("there is no data folder at \(dataDirectory); pass --data-dir")
        return 66
    }
    // Building an index holds SQLite's write lock for as long as it takes, and a server's writes
    // would fail meanwhile: a running server builds it itself from the app definition instead.
    if action == "create",
        let status = lockForAdminCommand(
            dataDirectory, command: "'roost index create'",
            instead:
                "Add the field to the collection's \"indexes\" in roost.json and run 'roost app apply' "
                + "(the server builds it without failing writes), or stop the server first.")
    {
        return status
    }
    do {
        let store = try SQLiteStorage(directory: dataDirectory).objects
        switch (action, names.count) {
        case ("list", 0):
            let indexes = try store.fieldIndexes()
            if indexes.isEmpty { say("no field indexes") }
            for index in indexes { say("\(index.collection)\t\(index.field)") }
        case ("create", 2), ("drop", 2):
            guard ObjectService.isValidCollection(names[0]) else {
                printError("'\(names[0])' is not a collection name: a letter, then letters, digits or '_'")
                return 64
            }
            guard let field = FieldPath(names[1]) else {
                printError("'\(names[1])' is not a field: identifiers joined by '.', such as author.name")
                return 64
            }
            if action == "create" {
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
    } catch {
        printError("\(error)")
        return exitStatus(for: error)
    }
}
