import RoostCore
import RoostJSON
import RoostStore

/// `createObjAtUrl`, `updateObj`, `deleteObj` and `registerUser`.
extension FatFractalScriptAPI {
    /// Creates the object in the collection the URL names. A valid `guid` it carries is kept
    /// (hoodyoodoo copies a Celebrity into TopCelebrity under the same guid), and so are the blob
    /// members its `ffRefs` name, when the script may read their objects; other metadata
    /// (`ffUrl`, `version`, `createdAt`, `ffRL`, …) is dropped and `ffRefs` become references,
    /// as the dialect does for a client's create.
    func create(_ object: JSONObject, at address: ScriptAddress) async throws -> JSONValue {
        guard address.target == .collection else {
            throw RoostError.invalidScriptArgument(
                "createObjAtUrl",
                "Argument 2 of ff.createObjAtUrl must name a collection, such as /ff/resources/\(address.collection)."
            )
        }
        if address.collection == AccountService.userCollection {
            throw RoostError.forbidden(
                "Scripts create FFUser objects with ff.registerUser, which makes the account too.")
        }
        // Blob members come along by content address (hoodyoodoo's TopCelebrity keeps its photo),
        // from sources the caller may read too when the script has other rights than its caller's:
        // the object may be what the caller sent, naming a blob only the system may read.
        let created = try await objects.create(
            in: address.collection, body: FatFractalWire.lenientBody(object, updating: nil),
            copyingBlobs: FatFractalWire.blobCopies(in: object), caller: rights,
            sourcesAlsoReadableBy: rights != activeCaller && blobCopiesNeedTheCaller ? [activeCaller] : [])
        return try wire(created.document, acl: created.acl)
    }

    /// Replaces the object its `ffUrl` (else `clazz` and `guid`) names with its fields: FatFractal's
    /// whole-object update, without `If-Match`; echoed metadata, however stale, is ignored.
    func update(_ object: JSONObject, _ call: ScriptCall) async throws -> JSONValue {
        let (collection, guid) = try ScriptAddress.objectAddress(of: object, call: call, position: 0)
        let updated = try await objects.replace(
            in: collection, guid: guid, body: FatFractalWire.lenientBody(object, updating: guid),
            ifMatch: nil,
            caller: rights)
        return try wire(updated.document, acl: updated.acl)
    }

    /// Deletes the object given, or the one a URL names. An FFUser goes with its account, and only
    /// with system rights (clients cannot delete users either).
    func delete(_ call: ScriptCall) async throws {
        let collection: String
        let guid: String
        switch call.arguments[0] {
        case .object(let object):
            (collection, guid) = try ScriptAddress.objectAddress(of: object, call: call, position: 0)
        case .string:
            let address = try address(call, 0)
            guard case .object(let named) = address.target else {
                throw call.invalid(
                    0, "must name one object, such as /ff/resources/\(address.collection)/<guid>")
            }
            (collection, guid) = (address.collection, named)
        default:
            throw call.invalid(0, "must be an object or its URL, not \(call.arguments[0].typeName)")
        }
        guard collection == AccountService.userCollection else {
            try await objects.delete(in: collection, guid: guid, ifMatch: nil, caller: rights)
            return
        }
        // Found first, so a script without system rights learns nothing it could not read.
        let user = try await objects.object(in: collection, guid: guid, caller: rights)
        guard isSystem, case .object(let fields) = try JSONParser.parse(user.document),
            let userName = fields["userName"]?.stringValue
        else {
            throw RoostError.forbidden(
                "Only scripts with system rights (\"runAs\": \"system\") delete users.")
        }
        try await accounts.deleteUser(userName: userName)
    }

    /// `ff.registerUser(user, password[, autoActivate[, sendWelcomeEmail]])`: makes an account
    /// (FFUser and credentials) without logging anyone in. `autoActivate: false` leaves it
    /// inactive; a welcome mail needs mail, which this server does not have.
    func registerUser(_ call: ScriptCall) async throws -> JSONValue {
        try call.expectCount(2...4)
        var body = FatFractalWire.lenientBody(try call.object(0, maxBytes: 1 << 20), updating: nil)
        guard case .string(let password) = call.arguments[1] else {
            throw call.invalid(1, "must be the password as a string")
        }
        guard password.utf8.count <= 1024 else { throw call.invalid(1, "is a password over 1024 bytes") }
        var active = true
        if call.arguments.count > 2 {
            switch call.arguments[2] {
            case .bool(let value): active = value
            case .null: break
            default: throw call.invalid(2, "(autoActivate) must be true or false")
            }
        }
        if call.arguments.count > 3 {
            switch call.arguments[3] {
            case .bool(true):
                throw RoostError.scriptServiceNotConfigured(
                    "registerUser with sendWelcomeEmail", service: "an outgoing mail server")
            case .bool(false), .null: break
            default: throw call.invalid(3, "(sendWelcomeEmail) must be true or false")
            }
        }
        // FatFractal's objects carry their class; an account's is always FFUser.
        body["clazz"] = nil
        body["guid"] = nil
        body["password"] = .string(password)
        let user = try await accounts.createUserForScript(
            body, active: active, ignoringRegistrationSetting: isSystem)
        return try wire(user.document)
    }
}
