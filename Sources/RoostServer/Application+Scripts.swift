import Foundation
import RoostCore
import RoostHTTP
import RoostJSON
import RoostScripts

/// How server-side scripts run (`--script-*` options).
public struct ScriptOptions: Sendable {
    /// The program a worker runs (`<it> script-worker`); nil is this process's own binary.
    public var workerExecutable: String?
    /// Worker processes; four per core by default, since a script mostly waits for its data
    /// calls (measured on 2 cores: 8 workers ran 1.4× the handler runs of 2).
    public var workers = min(64, 4 * ProcessInfo.processInfo.activeProcessorCount)
    /// Seconds a script may run, its data calls included.
    public var timeout: Double = 5
    /// Bytes of JavaScript heap a worker may hold.
    public var memoryLimit = 64 << 20

    public init() {}
}

extension Application {
    static func makeScriptRuntime(_ configuration: ServerConfiguration, logger: Logger) -> ScriptRuntime {
        let options = configuration.scripts
        let executable =
            options.workerExecutable
            ?? (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
            ?? CommandLine.arguments[0]
        var runtime = ScriptRuntime.Configuration(workerExecutable: executable, workers: options.workers)
        runtime.timeout = options.timeout
        runtime.memoryLimit = options.memoryLimit
        return ScriptRuntime(configuration: runtime, log: { [logger] line in logger.error(line) })
    }

    static func scriptHandlerRunner(
        _ configuration: ServerConfiguration, runtime: ScriptRuntime, objects: ObjectService,
        accounts: AccountService, definitions: AppDefinitionSource, logger: Logger
    ) -> ScriptHandlerRunner {
        let scheme = configuration.tlsCertificatePath == nil ? "http" : "https"
        let prefix =
            configuration.appPrefix.map { "/" + $0.trimmingCharacters(in: CharacterSet(charactersIn: "/")) }
            ?? ""
        let address = "\(scheme)://\(configuration.host):\(configuration.port)\(prefix)"
        return ScriptHandlerRunner(
            runtime: runtime, definitions: definitions, objects: objects, accounts: accounts,
            makeCalls: scriptCallsFactory(
                objects: objects, accounts: accounts, appAddress: address, logger: logger),
            appAddress: address, logger: logger)
    }

    /// The `ff` API host for one handler run.
    static func scriptCallsFactory(
        objects: ObjectService, accounts: AccountService, appAddress: String, logger: Logger
    ) -> ScriptCallsFactory {
        { caller, rights, name in
            FatFractalScriptAPI(
                objects: objects, accounts: accounts,
                rights: FatFractalScriptAPI.rights(rights, caller: caller),
                appAddress: appAddress, requestID: "-", scriptName: name, logger: logger)
        }
    }
}
