import RoostCore
import RoostJSON
import RoostScriptProtocol
import RoostStore

/// FatFractal's server-side `ff` API, carried out for one running script with one caller's rights.
///
/// Every data call goes through the ``ObjectService`` it is given (whose writes, for scripts, run
/// no handlers) with ``rights``: the caller's (anonymous is `nil`, and reads only what an
/// anonymous client can) or ``systemPrincipal`` for handlers and extensions marked
/// `"runAs": "system"`. Objects come and go in FatFractal's wire shape, as the dialect serves them.
/// A failure is a ``RoostError`` the script sees as an exception with `statusCode`,
/// `statusMessage` and `code`.
public struct FatFractalScriptAPI: ScriptCallHandling {
    /// How much one call may read or send.
    public struct Limits: Sendable {
        /// Objects one `getArrayFromUrl` may answer; it reads page after page up to this.
        public var maxArrayObjects = 10_000
        /// Guids one `getAllGuids` may answer.
        public var maxGuids = 100_000
        /// Bytes of objects one call may answer (the reply must fit the worker channel's frame).
        public var maxResultBytes = 8 << 20
        /// Bytes of one object a script creates or updates (the server's request body limit).
        public var maxObjectBytes = 10 << 20
        /// Characters of one URL argument.
        public var maxURLLength = 8192
        /// Objects read per page while collecting.
        public var pageSize = ObjectService.maximumPageSize

        public init() {}
    }

    /// Who a script with system rights acts as: no rule applies, and what it creates has
    /// `createdBy: "system"`, as on FatFractal.
    public static let systemPrincipal = Principal(userGuid: "system", tokenId: "script-system", isAdmin: true)

    /// The rights a handler or extension runs with: the caller's, or the system's.
    public static func rights(_ rights: ScriptRights, caller: Principal?) -> Principal? {
        rights == .system ? systemPrincipal : caller
    }

    /// FatFractal's user `anonymous`, what scripts see of a caller who did not log in.
    static let anonymousUser = JSONValue.object(
        JSONObject(uniqueMembers: [
            ("clazz", .string(AccountService.userCollection)), ("guid", .string("anonymous")),
            ("userName", .string("anonymous")),
        ]))

    /// What `ff.getActiveUser()` answers (a `getActiveUser` call): the caller's
    /// FFUser in the wire shape, or FatFractal's user `anonymous` (its scripts test
    /// `ff.getActiveUser().guid == "anonymous"`).
    public static func activeUser(_ caller: Principal?, accounts: AccountService) async throws -> JSONValue {
        guard let caller else { return Self.anonymousUser }
        if caller == .system { return Self.systemUser }
        let user = try await accounts.user(caller)
        guard case .object(let document) = try JSONParser.parse(user.document) else { return .null }
        return FatFractalWire.wireObject(document) { _, _, _ in true }
    }

    let objects: ObjectService
    let accounts: AccountService
    /// Whose rights the data calls carry; nil is an anonymous caller.
    public let rights: Principal?
    /// Who caused the event or called the extension (nil: anonymous), whatever the rights:
    /// what `getActiveUser` answers.
    public let activeCaller: Principal?
    /// `https://host[/prefix]`, what `getHttpAppAddress()` answers (the worker has it already).
    public let appAddress: String
    public let requestID: String
    /// The handler's or extension's name, on every log line.
    public let scriptName: String
    let logger: any ScriptLog
    public var limits = Limits()
    /// The object an update replaced, for an update's handler: `getUpdateEventHandlerData()`'s `old`.
    public var replacedObject: JSONValue?
    /// Whether blobs a script with other rights than its caller's copies must be readable by the
    /// caller too; `roost script run` clears it (the operator is the caller there).
    public var blobCopiesNeedTheCaller = true
    /// What the push and mail calls reach; a service missing answers 501 `not_configured`.
    public var services = ScriptServices()
    var push: ScriptPush? { services.push }
    /// Messages this run has queued with `sendEmail`, shared by the copies acting as other users.
    var mailsQueued = ScriptMailCount()

    public init(
        objects: ObjectService, accounts: AccountService, rights: Principal?, activeCaller: Principal?,
        appAddress: String, requestID: String, scriptName: String, logger: any ScriptLog,
        limits: Limits = Limits()
    ) {
        self.objects = objects
        self.accounts = accounts
        self.rights = rights
        self.activeCaller = activeCaller
        self.appAddress = appAddress
        self.requestID = requestID
        self.scriptName = scriptName
        self.logger = logger
        self.limits = limits
    }

    /// Whether the script was declared `"runAs": "system"`. An administrator's own rights are not
    /// the system's: their scripts read and write everything, but neither act as other users nor
    /// set passwords.
    var isSystem: Bool { rights == Self.systemPrincipal }

    public func call(_ method: String, arguments: [JSONValue]) async throws -> JSONValue {
        // FatFractal's data calls end with an optional `asUserGuid`: whom the call acts as.
        if let position = Self.actingUserPosition[method], arguments.count == position + 1 {
            let acting = try await self.acting(
                as: arguments[position], ScriptCall(method: method, arguments: arguments), position: position)
            return try await acting.perform(method, Array(arguments.prefix(position)))
        }
        return try await perform(method, arguments)
    }

    private func perform(_ method: String, _ arguments: [JSONValue]) async throws -> JSONValue {
        let call = ScriptCall(method: method, arguments: arguments)
        switch method {
        case "getObjFromUrl", "getObjFromUri":
            try call.expectCount(1)
            return try await object(at: try address(call, 0))
        case "getUser", "getGroup":
            try call.expectCount(1)
            let collection = method == "getUser" ? AccountService.userCollection : "FFUserGroup"
            return try await object(at: ScriptAddress(collection: collection, guid: try call.guid(0)))
        case "getReferredObject":
            try call.expectCount(1)
            let address = try address(call, 0)
            guard case .object = address.target else {
                throw call.invalid(0, "must be a reference's URL, which names one object")
            }
            return try await object(at: address)
        case "getArrayFromUrl", "getArrayFromUri":
            try call.expectCount(1)
            return try await array(at: try address(call, 0, allowingArray: true), call)
        case "getAllGuids":
            try call.expectCount(1)
            return try await allGuids(at: try address(call, 0), call)
        case "createObjAtUrl", "createObjAtUri":
            try call.expectCount(2)
            return try await create(
                try call.object(0, maxBytes: limits.maxObjectBytes), at: try address(call, 1))
        case "updateObj":
            try call.expectCount(1)
            return try await update(try call.object(0, maxBytes: limits.maxObjectBytes), call)
        case "deleteObj", "deleteObjAtUrl", "deleteObjAtUri":
            try call.expectCount(1)
            try await delete(call)
            return .null
        case "getGuids":
            try call.expectCount(2)
            return try await guids(at: try address(call, 0), count: try call.count(1), call)
        case "getResultCountForQuery":
            try call.expectCount(1)
            return try await resultCount(at: try address(call, 0))
        case "deleteAllForQuery":
            try call.expectCount(1)
            return try await deleteAll(at: try address(call, 0), call)
        case "registerUser":
            return try await registerUser(call)
        case "getUpdateEventHandlerData":
            try call.expectCount(0)
            guard let replacedObject else {
                throw RoostError.invalidScriptArgument(
                    method, "ff.getUpdateEventHandlerData is for the handlers of UPDATE events.")
            }
            return replacedObject
        case "getActiveUser":
            try call.expectCount(0)
            // A user deleted meanwhile is no user, as a failed lookup always was.
            return (try? await Self.activeUser(activeCaller, accounts: accounts)) ?? .null
        case "resetPassword":
            return try await resetPassword(call)
        case "sendPushNotifications", "sendIOSPush":
            return try await sendPush(call)
        case "getAppMetaData", "executeFFDL":
            return try await metadataCall(call)
        case "sendEmail", "sendSMTPEmail":
            return try await sendMail(call)
        default:
            throw RoostError.unknownScriptCall(method)
        }
    }

    public func log(level: String, message: String) {
        let text =
            message.utf8.count > 8192 ? String(decoding: message.utf8.prefix(8192), as: UTF8.self) : message
        logger.scriptLine(level: level, text, requestID: requestID, fields: [("script", scriptName)])
    }

    /// The URL argument at `position` (or, with `allowingArray`, an array of one URL, as
    /// hoodyoodoo's `getArrayFromUrl(['/ff/resources/TopCelebrity'])`).
    func address(_ call: ScriptCall, _ position: Int, allowingArray: Bool = false) throws -> ScriptAddress {
        var value = call.arguments[position]
        if allowingArray, case .array(let elements) = value {
            guard elements.count == 1 else {
                throw call.invalid(
                    position, "takes a URL or an array of exactly one URL, not \(elements.count)")
            }
            value = elements[0]
        }
        guard case .string(let url) = value else { throw call.invalid(position, "must be a URL string") }
        return try ScriptAddress(url, call: call, position: position, maxLength: limits.maxURLLength)
    }

    // MARK: Reads

    /// One object, or null when there is none the rights may read (a query's first match).
    func object(at address: ScriptAddress) async throws -> JSONValue {
        switch address.target {
        case .object(let guid):
            do {
                let found = try await objects.object(in: address.collection, guid: guid, caller: rights)
                return try wire(found.document, acl: found.acl)
            } catch let error as RoostError where error.status == 404 {
                return .null
            }
        case .collection, .query:
            let page = try await page(of: address, start: 0, count: 1)
            return try page.documents.first.map { try wire($0) } ?? .null
        }
    }

    /// Every object the URL names that the rights may list, page after page up to the cap.
    func array(at address: ScriptAddress, _ call: ScriptCall) async throws -> JSONValue {
        if case .object = address.target {
            let one = try await object(at: address)
            return .array(one == .null ? [] : [one])
        }
        var items: [JSONValue] = []
        var bytes = 0
        try await collect(address, limit: limits.maxArrayObjects, call) { documents in
            for document in documents {
                bytes += document.count
                guard bytes <= limits.maxResultBytes else {
                    throw RoostError.scriptResultTooLarge(call, bytes: limits.maxResultBytes)
                }
                items.append(try wire(document))
            }
        }
        return .array(items)
    }

    /// The guids of every object the URL names that the rights may list, up to the cap.
    func allGuids(at address: ScriptAddress, _ call: ScriptCall) async throws -> JSONValue {
        try await guids(at: address, limit: limits.maxGuids, stoppingAtLimit: false, call)
    }

    /// Reads pages of `pageSize` until one comes back short; more than `limit` objects is an error,
    /// unless `stoppingAtLimit` (then the first `limit` are taken).
    func collect(
        _ address: ScriptAddress, limit: Int, _ call: ScriptCall, stoppingAtLimit: Bool = false,
        _ take: ([[UInt8]]) throws -> Void
    ) async throws {
        var read = 0
        while true {
            try Task.checkCancellation()
            let wanted = min(limits.pageSize, limit + (stoppingAtLimit ? 0 : 1) - read)
            if wanted == 0 { return }
            let page = try await page(of: address, start: read, count: wanted)
            read += page.documents.count
            guard read <= limit else { throw RoostError.scriptTooManyObjects(call, limit: limit) }
            try take(page.documents)
            if page.documents.count < wanted || wanted == 0 { return }
        }
    }

    func page(of address: ScriptAddress, start: Int, count: Int, includeTotal: Bool = false) async throws
        -> Page
    {
        let request = PageRequest(
            collection: address.collection, start: start, count: count, includeTotal: includeTotal)
        switch address.target {
        case .collection:
            return try await objects.list(request, caller: rights)
        case .query(let text):
            if let (query, member) = QueryTraversal.split(text) {
                return try await objects.traverse(query: query, member: member, request, caller: rights)
            }
            // A random pick answers one object whatever the page: draw it once.
            if address.picksRandom, start > 0 { return Page(documents: [], total: nil) }
            return try await objects.find(query: text, request, caller: rights)
        case .object:
            return Page(documents: [], total: nil)
        }
    }

    /// A stored document as the dialect serves it, `ffUserCanEdit` judged for these rights.
    func wire(_ document: [UInt8], acl: [UInt8]? = nil) throws -> JSONValue {
        guard case .object(let object) = try JSONParser.parse(document) else {
            throw RoostError.internalError
        }
        let access = Access(caller: rights, definition: objects.definitions.definition)
        return FatFractalWire.wireObject(object) { collection, document, createdBy in
            access.mayUpdate(collection: collection, document: document, createdBy: createdBy, acl: acl)
        }
    }
}

/// One `ff` call's method and arguments, for validation with messages that name both.
struct ScriptCall {
    let method: String
    let arguments: [JSONValue]

    func expectCount(_ counts: ClosedRange<Int>) throws {
        guard counts.contains(arguments.count) else {
            let wanted =
                counts.count == 1 ? "\(counts.lowerBound)" : "\(counts.lowerBound) to \(counts.upperBound)"
            throw RoostError.invalidScriptArgument(
                method, "ff.\(method) takes \(wanted) argument(s), not \(arguments.count).")
        }
    }

    func expectCount(_ count: Int) throws { try expectCount(count...count) }

    /// The argument at `position` as an object of at most `maxBytes` of JSON.
    func object(_ position: Int, maxBytes: Int) throws -> JSONObject {
        guard case .object(let object) = arguments[position] else {
            throw invalid(position, "must be an object, not \(arguments[position].typeName)")
        }
        let text = JSONWriter.bytes(.object(object))
        guard text.count <= maxBytes else {
            throw invalid(position, "is over the \(maxBytes)-byte limit of one object")
        }
        // No deeper than a client may send: stored, it must parse again for every reader.
        guard JSONNesting.depth(of: text) <= JSONParser.defaultMaximumDepth else {
            throw invalid(
                position, "is nested deeper than the \(JSONParser.defaultMaximumDepth) levels of one object")
        }
        return object
    }

    /// The argument at `position` as a guid Roost accepts: never a query or a path to splice.
    func guid(_ position: Int) throws -> String {
        guard case .string(let guid) = arguments[position], ObjectService.isValidGuid(guid) else {
            throw RoostError.invalidGuid(
                arguments[position].stringValue ?? JSONWriter.string(arguments[position]))
        }
        return guid
    }

    func invalid(_ position: Int, _ problem: String) -> RoostError {
        RoostError.invalidScriptArgument(method, "Argument \(position + 1) of ff.\(method) \(problem).")
    }
}

extension RoostError {
    /// A script called an `ff` function the server does not have.
    static func unknownScriptCall(_ method: String) -> RoostError {
        RoostError(
            status: 400, code: .unknownScriptCall,
            message: "The server has no ff.\(method.prefix(100)) for scripts.",
            details: JSONObject(uniqueMembers: [("method", .string(String(method.prefix(100))))]))
    }

    /// An `ff` call's arguments are of the wrong number, type or size.
    static func invalidScriptArgument(_ method: String, _ message: String) -> RoostError {
        RoostError(
            status: 400, code: .invalidScriptArgument, message: message,
            details: JSONObject(uniqueMembers: [("method", .string(method))]))
    }

    /// A read names more objects than one call may answer.
    static func scriptTooManyObjects(_ call: ScriptCall, limit: Int) -> RoostError {
        RoostError(
            status: 400, code: .scriptResultTooLarge,
            message:
                "ff.\(call.method) matches more than \(limit) objects; narrow the URL with a query (it reads at most \(limit)).",
            details: JSONObject(uniqueMembers: [
                ("method", .string(call.method)), ("limit", .integer(Int64(limit))),
            ]))
    }

    /// A read's objects are more bytes than one call may answer.
    static func scriptResultTooLarge(_ call: ScriptCall, bytes: Int) -> RoostError {
        RoostError(
            status: 400, code: .scriptResultTooLarge,
            message:
                "ff.\(call.method)'s objects come to more than \(bytes >> 20) MiB; narrow the URL with a query.",
            details: JSONObject(uniqueMembers: [
                ("method", .string(call.method)), ("limitBytes", .integer(Int64(bytes))),
            ]))
    }
}
