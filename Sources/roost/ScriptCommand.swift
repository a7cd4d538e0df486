import Foundation
import RoostCore
import RoostHTTP
import RoostJSON
import RoostScripts
import RoostServer
import RoostStore

let scriptHelp = """
    Run a JavaScript file against a data folder (or a --database), as a handler or extension would.

    USAGE:
      roost script run FILE [--app roost.json] [--data-dir PATH | --database URL]
                            [--as USER_GUID | --system] [--data JSON] [--timeout SECONDS]

    FILE runs as a script in FatFractal's style: `require('ffef/FatFractal')` is the ff API, and
    `require('scripts/Name')` loads the app's modules from the scripts/ folder next to --app
    (default ./roost.json, when there is one). `ff.getEventHandlerData()` and the
    FF_EVENT_DATA_JSON text are --data (default {}). Data calls carry the rights of --as (a user's
    guid), of the system (--system), or of an anonymous caller (the default), and go through the
    same rules as the server's; the app's handlers do not run for them. What the script prints
    goes to standard error; its value (the file's last expression) and its ff.response(), if it
    made one, are printed as JSON. The database is changed for real: try it on a copy.

    Exit status: 0 when the script finished, 1 when it failed (its error is printed), 64 for a
    usage error.

    EXAMPLE:
      roost script run scripts/try.js --data-dir ./roost-data --system
    """

/// `roost script run`: returns the exit status.
func script(_ arguments: [String]) async -> Int32 {
    guard arguments.first == "run", arguments.count >= 2, !arguments[1].hasPrefix("-") else {
        print(scriptHelp)
        return arguments.isEmpty || ["-h", "--help", "help"].contains(arguments[0]) ? 0 : 64
    }
    let file = arguments[1]
    var database = CommandDatabase()
    var appPath: String? = FileManager.default.fileExists(atPath: "roost.json") ? "roost.json" : nil
    var userGuid: String?
    var system = false
    var dataText = "{}"
    var timeout = 30.0
    var rest = Array(arguments.dropFirst(2))[...]
    while let argument = rest.popFirst() {
        if database.take(argument, value: { rest.popFirst() }) { continue }
        switch argument {
        case "--app": appPath = rest.popFirst()
        case "--as": userGuid = rest.popFirst()
        case "--system": system = true
        case "--data": dataText = rest.popFirst() ?? ""
        case "--timeout":
            guard let seconds = rest.popFirst().flatMap(Double.init), (1...3600).contains(seconds) else {
                printError("--timeout takes a number of seconds from 1 to 3600")
                return 64
            }
            timeout = seconds
        default:
            printError("unknown option '\(argument)'\nRun 'roost script --help' for the options.")
            return 64
        }
    }
    guard let source = FileManager.default.contents(atPath: file),
        let code = String(data: source, encoding: .utf8)
    else {
        printError("cannot read '\(file)' as UTF-8 text")
        return 64
    }
    guard let data = try? JSONParser.parse(dataText) else {
        printError("--data takes JSON, such as {\"title\":\"hello\"}")
        return 64
    }
    if let status = database.requireExisting() { return status }
    do {
        let definitions = try appPath.map { try AppDefinitionSource(path: $0) } ?? AppDefinitionSource()
        return try await database.withStorage { storage in
            try await runScript(
                code, name: URL(fileURLWithPath: file).lastPathComponent, data: data, argument: dataText,
                storage: storage, definitions: definitions, userGuid: userGuid, system: system,
                timeout: timeout)
        }
    } catch {
        printError("\(error)")
        return 1
    }
}

private func runScript(
    _ code: String, name: String, data: JSONValue, argument: String, storage: any Storage,
    definitions: AppDefinitionSource, userGuid: String?, system: Bool, timeout: Double
) async throws -> Int32 {
    let objects = ObjectService(store: storage.objectStore, definitions: definitions)
    let accounts = AccountService(
        objects: storage.objectStore, accounts: storage.accountStore, clock: SystemWallClock(),
        guids: RandomGuidGenerator(), throttle: LoginThrottle(clock: SystemWallClock()), decoyHash: "",
        definitions: definitions)
    var caller: Principal?
    if let userGuid {
        guard let found = await accounts.refreshed(Principal(userGuid: userGuid, tokenId: "roost-script-run"))
        else {
            printError("no active user has the guid '\(userGuid)'; 'roost users list' shows them")
            return 64
        }
        caller = found
    }
    let logger = Logger(level: .info, format: .text, sink: Logger.standardError)
    var configuration = ScriptRuntime.Configuration(
        workerExecutable: (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
            ?? CommandLine.arguments[0],
        workers: 1)
    configuration.timeout = timeout
    let runtime = ScriptRuntime(configuration: configuration, log: { printError($0) })
    defer { Task { await runtime.shutdown() } }
    try await runtime.load(definitions.definition.scripts.modules)
    var context = JSONObject()
    context["appAddress"] = .string("http://localhost")
    var calls = FatFractalScriptAPI(
        objects: objects, accounts: accounts,
        rights: FatFractalScriptAPI.rights(system ? .system : .caller, caller: caller), activeCaller: caller,
        appAddress: "http://localhost",
        requestID: "roost-script-run", scriptName: name, logger: logger)
    calls.blobCopiesNeedTheCaller = false
    do {
        let outcome = try await runtime.invoke(
            ScriptInvocation(
                kind: .run, name: name, entry: ScriptEntry(code: code), argument: argument, data: data,
                context: context),
            calls: calls)
        var result = JSONObject(uniqueMembers: [("value", outcome.value)])
        if let response = outcome.response { result["response"] = .object(response) }
        say(JSONWriter.string(.object(result)))
        await runtime.shutdown()
        return 0
    } catch let error as RoostError {
        printError("\(name): \(error.message)")
        await runtime.shutdown()
        return 1
    }
}
