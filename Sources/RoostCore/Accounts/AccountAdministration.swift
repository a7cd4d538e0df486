import RoostJSON
import RoostStore

/// What the `roost users` commands do: bootstrap administrators and rescue locked-out users.
extension AccountService {
    /// Creates a user without logging them in; `admin` marks an administrator.
    public func createUser(userName: String, email: String?, password: String, admin: Bool) async throws
        -> StoredObject
    {
        var body = JSONObject()
        body["userName"] = .string(userName)
        if let email { body["email"] = .string(email) }
        body["password"] = .string(password)
        return try await createAccount(
            from: body, reservedFields: admin ? ["admin": .bool(true)] : [:], byOperator: true)
    }

    /// Sets a new password and ends every session of the user.
    public func resetPassword(userName: String, to password: String) async throws {
        let account = try await existingAccount(userName)
        try Self.validate(password: password, userName: account.userNameKey)
        try await accounts.updatePasswordHash(
            userGuid: account.userGuid, hash: try await hasher.hash(password), revoking: .all)
    }

    /// The user's guid and their sign-in identities (`roost users identities`).
    public func identities(userName: String, in store: any IdentityStore) async throws -> (
        userGuid: String, identities: [IdentityRecord]
    ) {
        let account = try await existingAccount(userName)
        return (account.userGuid, try await store.identities(userGuid: account.userGuid))
    }

    /// Deletes a user, their sessions and their `FFUser` object.
    public func deleteUser(userName: String) async throws {
        let account = try await existingAccount(userName)
        _ = try await accounts.deleteAccount(userGuid: account.userGuid)
    }

    /// Makes a user an administrator or takes it away (`roost users promote|demote`): the `admin`
    /// field of their `FFUser` object, the one `createUser(admin:)` sets and access checks read on
    /// every request, so live sessions take the change at once. `updatedBy` becomes null: no user
    /// made the change. Returns the user object, and whether it changed (false when the user
    /// already had that standing).
    public func setAdmin(userName: String, _ admin: Bool) async throws -> (user: StoredObject, changed: Bool)
    {
        let account = try await existingAccount(userName)
        for _ in 0..<ObjectService.writeAttempts {
            guard let current = try await objects.object(in: Self.userCollection, guid: account.userGuid)
            else {
                throw RoostError.notFound(collection: Self.userCollection, guid: account.userGuid)
            }
            var (fields, _) = try ObjectService.split(current.document)
            if (fields["admin"] == .bool(true)) == admin { return (current, false) }
            fields["admin"] = .bool(admin)
            var next = ObjectService.makeObject(
                collection: Self.userCollection, guid: current.guid, fields: fields,
                createdBy: current.createdBy,
                createdAt: current.createdAt, updatedBy: nil,
                updatedAt: max(clock.nowMilliseconds(), current.updatedAt), version: current.version + 1)
            next.acl = current.acl
            do {
                try await objects.update(next, expectedVersion: current.version)
                return (next, true)
            } catch StoreError.versionChanged {
                continue
            }
        }
        throw RoostError.writeContention(
            collection: Self.userCollection, guid: account.userGuid, attempts: ObjectService.writeAttempts)
    }

    private func existingAccount(_ identifier: String) async throws -> AccountRecord {
        guard let account = try await accounts.account(identifiedBy: Self.identifierKey(identifier)) else {
            throw RoostError(
                status: 404, code: .notFound, message: "There is no user '\(identifier.prefix(64))'.",
                details: RoostError.details(["userName": .string(String(identifier.prefix(64)))]))
        }
        return account
    }
}

/// What administrators do over HTTP: see and end anyone's sessions.
extension AccountService {
    /// The live tokens of a user, for an administrator.
    public func sessions(ofUser userGuid: String, by principal: Principal) async throws -> [TokenRecord] {
        try Self.requireAdmin(principal)
        let now = clock.nowMilliseconds()
        return try await accounts.tokens(userGuid: userGuid).filter { $0.expiresAt > now }
    }

    /// Revokes any token, for an administrator.
    public func revokeSession(id: String, by principal: Principal) async throws {
        try Self.requireAdmin(principal)
        guard try await accounts.deleteToken(id: id) else { throw RoostError.tokenNotFound(id) }
    }

    /// Throws 403 `admin_required` unless `principal` is an administrator.
    public static func requireAdmin(_ principal: Principal) throws {
        guard principal.isAdmin else {
            throw RoostError(
                status: 403, code: .adminRequired,
                message: "Only an administrator can do this; 'roost users create --admin' makes one.")
        }
    }
}

/// Groups the app definition declares.
extension AccountService {
    /// Creates the declared groups that do not exist yet, owned by no user and with no members.
    /// A declared group that an administrator created earlier is kept; one that another user
    /// created first was squatted and is replaced by an empty one. Returns the guids replaced.
    public func ensureDeclaredGroups(of definition: AppDefinition) async throws -> [String] {
        guard !definition.groups.isEmpty else { return [] }
        let now = clock.nowMilliseconds()
        let objects = definition.groups.sorted { $0.key < $1.key }.map { guid, group in
            ObjectService.makeObject(
                collection: AppDefinition.groupCollection, guid: guid,
                fields: JSONObject(uniqueMembers: [
                    ("groupName", .string(group.groupName)), ("users", .array([])),
                ]),
                createdBy: nil, createdAt: now, updatedBy: nil, updatedAt: now, version: 1)
        }
        return try await accounts.ensureGroups(objects, replacingWhen: Self.isSquatted)
    }

    /// A declared group's guid that a user claimed before the app declared it: squatted. The
    /// system's and an administrator's are adopted.
    public static func isSquatted(_ claim: GroupClaim) -> Bool {
        claim.createdBy != nil && !claim.creatorIsAdmin
    }
}
