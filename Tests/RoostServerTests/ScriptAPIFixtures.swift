import Foundation
import RoostCore
import RoostHTTP
import RoostJSON
import RoostStore
import RoostTestSupport
import Synchronization
import Testing

@testable import RoostScripts
@testable import RoostServer

/// The rules the script API tests run under: Celebrity is public to read, Diary private to its
/// author, and both need a logged-in user to write.
let scriptAPIDefinition = #"""
    {
      "collections": {
        "Celebrity": {"rules": {"read": "public", "list": "public", "create": "loggedIn",
                                "update": "loggedIn", "delete": "loggedIn"}},
        "TopCelebrity": {"rules": {"read": "public", "create": "loggedIn", "update": "loggedIn",
                                   "delete": "loggedIn"}},
        "Diary": {"rules": {"read": "createdBy eq @user.guid", "create": "loggedIn",
                            "update": "createdBy eq @user.guid", "delete": "createdBy eq @user.guid"}}
      }
    }
    """#

/// Log lines a test reads.
final class CapturedLog: Sendable {
    private let lines = Mutex<[String]>([])
    var text: String { lines.withLock { $0.joined() } }
    func append(_ bytes: [UInt8]) { lines.withLock { $0.append(String(decoding: bytes, as: UTF8.self)) } }
}

/// Real storage with the real object and account services, as the server builds them.
struct ScriptAPIWorld {
    let storage: any Storage
    let objects: ObjectService
    let accounts: AccountService
    let definitions: AppDefinitionSource
    let log = CapturedLog()
    var logger: Logger { Logger(level: .debug, sink: { [log] in log.append($0) }) }

    static func with<T>(
        definition: String = scriptAPIDefinition, _ body: (ScriptAPIWorld) async throws -> T
    ) async throws -> T {
        let directory = TestServer.makeTemporaryDirectory()
        let storage = try await TestBackend.openStorage(for: directory)
        let definitions = AppDefinitionSource(try AppDefinition.parse(Array(definition.utf8)))
        let clock = SteppingClock()
        let guids = SequentialGuids()
        let accounts = AccountService(
            objects: storage.objectStore, accounts: storage.accountStore, hasher: .cheapForTests(),
            clock: clock, guids: guids, throttle: LoginThrottle(clock: clock), decoyHash: "decoy",
            definitions: definitions)
        let objects = ObjectService(
            store: storage.objectStore, clock: clock, guids: guids, definitions: definitions)
        let world = ScriptAPIWorld(
            storage: storage, objects: objects, accounts: accounts, definitions: definitions)
        do {
            let result = try await body(world)
            await storage.close()
            return result
        } catch {
            await storage.close()
            throw error
        }
    }

    /// The API with these rights.
    func api(_ rights: Principal?, limits: FatFractalScriptAPI.Limits = .init()) -> FatFractalScriptAPI {
        FatFractalScriptAPI(
            objects: objects, accounts: accounts, rights: rights, activeCaller: rights,
            appAddress: "https://example.test/app",
            requestID: "req-1", scriptName: "TestScript", logger: logger, limits: limits)
    }

    /// A user made as `roost users create` makes one, and its principal.
    func user(_ name: String) async throws -> Principal {
        let user = try await accounts.createUser(
            userName: name, email: nil, password: "correct horse battery", admin: false)
        return Principal(userGuid: user.guid, tokenId: "token-\(name)")
    }

    /// An object created through the service as `caller`.
    func create(_ collection: String, _ json: String, as caller: Principal?) async throws -> StoredObject {
        guard case .object(let body) = try JSONParser.parse(json) else { throw RoostError.internalError }
        return try await objects.create(in: collection, body: body, caller: caller)
    }
}

/// JSON from text, for arguments.
func json(_ text: String) throws -> JSONValue { try JSONParser.parse(text) }

extension FatFractalScriptAPI {
    /// `ff.<method>(arguments…)`.
    func ff(_ method: String, _ arguments: JSONValue...) async throws -> JSONValue {
        try await call(method, arguments: arguments)
    }
}

extension JSONValue {
    subscript(_ key: String) -> JSONValue? { objectValue?[key] }
    var array: [JSONValue] { arrayValue ?? [] }
}

/// The RoostError a call throws, or nil.
func scriptError(_ body: () async throws -> Void) async -> RoostError? {
    do {
        try await body()
        return nil
    } catch let error as RoostError {
        return error
    } catch {
        return RoostError(status: 0, code: ErrorCode(rawValue: "not_a_roost_error: \(error)"), message: "")
    }
}
