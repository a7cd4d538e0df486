import RoostCore
import RoostJSON
import RoostStore

/// The rest of FatFractal's data API: the `asUserGuid` every data call may end with, counted and
/// bounded reads, deleting what a query matches, and setting a user's password.
extension FatFractalScriptAPI {
    /// Where a method's optional trailing `asUserGuid` argument sits.
    static let actingUserPosition: [String: Int] = [
        "getObjFromUrl": 1, "getObjFromUri": 1, "getArrayFromUrl": 1, "getArrayFromUri": 1,
        "getAllGuids": 1, "createObjAtUrl": 2, "createObjAtUri": 2, "updateObj": 1, "deleteObj": 1,
        "deleteObjAtUrl": 1, "deleteObjAtUri": 1, "getGuids": 2, "getResultCountForQuery": 1,
        "deleteAllForQuery": 1, "getUser": 1, "getGroup": 1, "getReferredObject": 1,
    ]

    /// FatFractal's anonymous user, as a guid a script may name.
    static let anonymousGuid = "anonymous"

    /// The API acting as the user `value` names. A script with system rights may act as anyone
    /// (`"system"`, `"anonymous"` or a user's guid): on FatFractal every script could, and this
    /// lowers its rights. A script with its caller's rights may name only that caller: naming
    /// anyone else would raise them. Null or empty keeps the script's own rights.
    func acting(as value: JSONValue, _ call: ScriptCall, position: Int) async throws -> FatFractalScriptAPI {
        let guid: String
        switch value {
        case .null: return self
        case .string(let text) where text.isEmpty: return self
        case .string(let text) where ObjectService.isValidGuid(text): guid = text
        case .string(let text): throw RoostError.invalidGuid(text)
        default:
            throw call.invalid(position, "(asUserGuid) must be a user's guid, 'system' or 'anonymous'")
        }
        guard isSystem else {
            let own = rights?.userGuid ?? Self.anonymousGuid
            guard guid == own else {
                throw RoostError.forbidden(
                    "This script runs with its caller's rights, so its ff calls act only as that caller; declare it \"runAs\": \"system\" to act as another user."
                )
            }
            return self
        }
        switch guid {
        case Self.systemPrincipal.userGuid: return self
        case Self.anonymousGuid: return with(rights: nil)
        default:
            // Strict: a user who cannot be read is not acted as.
            guard let user = try await accounts.current(Principal(userGuid: guid, tokenId: "script-as-user"))
            else {
                throw call.invalid(position, "(asUserGuid) names no active user: '\(guid.prefix(100))'")
            }
            return with(rights: user)
        }
    }

    private func with(rights: Principal?) -> FatFractalScriptAPI {
        var acting = FatFractalScriptAPI(
            objects: objects, accounts: accounts, rights: rights, activeCaller: activeCaller,
            appAddress: appAddress, requestID: requestID, scriptName: scriptName, logger: logger,
            limits: limits)
        acting.replacedObject = replacedObject
        acting.services = services
        acting.mailsQueued = mailsQueued
        acting.blobCopiesNeedTheCaller = blobCopiesNeedTheCaller
        return acting
    }

    /// `getGuids(url, count)`: the guids of at most `count` objects the URL names.
    func guids(at address: ScriptAddress, count: Int, _ call: ScriptCall) async throws -> JSONValue {
        try await guids(at: address, limit: min(count, limits.maxGuids), stoppingAtLimit: true, call)
    }

    /// The guids of the objects the URL names, at most `limit`: more is an error unless
    /// `stoppingAtLimit`.
    func guids(at address: ScriptAddress, limit: Int, stoppingAtLimit: Bool, _ call: ScriptCall) async throws
        -> JSONValue
    {
        if case .object = address.target {
            let one = try await object(at: address)
            return .array(limit == 0 ? [] : one.objectValue?["guid"].map { [$0] } ?? [])
        }
        var guids: [JSONValue] = []
        try await collect(address, limit: limit, call, stoppingAtLimit: stoppingAtLimit) { documents in
            for document in documents {
                guard case .object(let object) = try JSONParser.parse(document), let guid = object["guid"]
                else { continue }
                guids.append(guid)
            }
        }
        return .array(guids)
    }

    /// `getResultCountForQuery(url)`: how many objects the URL names that these rights may list.
    func resultCount(at address: ScriptAddress) async throws -> JSONValue {
        if case .object = address.target {
            return .integer(try await object(at: address) == .null ? 0 : 1)
        }
        let page = try await page(of: address, start: 0, count: 1, includeTotal: true)
        return .integer(Int64(page.total ?? page.documents.count))
    }

    /// `deleteAllForQuery(url)`: deletes every object the URL names (at most
    /// ``Limits/maxArrayObjects``, else nothing is deleted) with these rights; answers how many.
    /// An object these rights may list but not delete stops the call with 403, after the ones
    /// before it.
    func deleteAll(at address: ScriptAddress, _ call: ScriptCall) async throws -> JSONValue {
        guard address.collection != AccountService.userCollection else {
            throw RoostError.forbidden("Scripts delete users one at a time, with ff.deleteObj.")
        }
        let found = try await guids(at: address, limit: limits.maxArrayObjects, stoppingAtLimit: false, call)
        var deleted: Int64 = 0
        for case .string(let guid) in found.arrayValue ?? [] {
            // A script that ran out of time abandons its call: the deleting stops with it.
            try Task.checkCancellation()
            do {
                try await objects.delete(in: address.collection, guid: guid, ifMatch: nil, caller: rights)
                deleted += 1
            } catch let error as RoostError where error.status == 404 {
                continue  // Deleted meanwhile.
            }
        }
        return .integer(deleted)
    }

    /// `resetPassword(userGuid, password)`: sets a user's password and ends their sessions, as
    /// `roost users passwd` does. Only with system rights.
    func resetPassword(_ call: ScriptCall) async throws -> JSONValue {
        try call.expectCount(2)
        let guid = try call.guid(0)
        guard case .string(let password) = call.arguments[1], password.utf8.count <= 1024 else {
            throw call.invalid(1, "must be the new password as a string of at most 1024 bytes")
        }
        guard isSystem else {
            throw RoostError.forbidden(
                "Only scripts with system rights (\"runAs\": \"system\") set passwords.")
        }
        let user = try await objects.object(in: AccountService.userCollection, guid: guid, caller: rights)
        guard case .object(let fields) = try JSONParser.parse(user.document),
            let userName = fields["userName"]?.stringValue
        else { throw RoostError.notFound(collection: AccountService.userCollection, guid: guid) }
        try await accounts.resetPassword(userName: userName, to: password)
        return .null
    }
}

extension ScriptCall {
    /// The argument at `position` as a count: a whole number from 0.
    func count(_ position: Int) throws -> Int {
        guard let value = arguments[position].integerValue, value >= 0 else {
            throw invalid(position, "must be a whole number from 0")
        }
        return Int(clamping: value)
    }
}
