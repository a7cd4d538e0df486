import Foundation

/// A per-object access list (`ffACL`): who may read and write one object, in place of the
/// collection's rules. Entries are user guids, group guids, or ``everyone``.
public struct AccessList: Codable, Sendable, Equatable {
    /// `"*"`: anyone.
    public static let everyone = "*"
    /// Users who may read.
    public var readUsers: [String]
    /// Groups whose members may read.
    public var readGroups: [String]
    /// Users who may write (and change the list).
    public var writeUsers: [String]
    /// Groups whose members may write.
    public var writeGroups: [String]

    /// A list from its parts; the object's creator may always read and write.
    public init(
        readUsers: [String] = [], readGroups: [String] = [], writeUsers: [String] = [],
        writeGroups: [String] = []
    ) {
        self.readUsers = readUsers
        self.readGroups = readGroups
        self.writeUsers = writeUsers
        self.writeGroups = writeGroups
    }

    private enum Keys: String, CodingKey { case readUsers, readGroups, writeUsers, writeGroups }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Keys.self)
        readUsers = try container.decodeIfPresent([String].self, forKey: .readUsers) ?? []
        readGroups = try container.decodeIfPresent([String].self, forKey: .readGroups) ?? []
        writeUsers = try container.decodeIfPresent([String].self, forKey: .writeUsers) ?? []
        writeGroups = try container.decodeIfPresent([String].self, forKey: .writeGroups) ?? []
    }

    var isEmpty: Bool { readUsers.isEmpty && readGroups.isEmpty && writeUsers.isEmpty && writeGroups.isEmpty }
}

/// A group of users (`FFUserGroup`): rules and access lists name it by its guid, which the
/// server chooses.
public struct RoostGroup: RoostModel, Equatable {
    /// Groups live in FatFractal's `FFUserGroup` collection.
    public static let collection = "FFUserGroup"
    /// The group's name, for people.
    public var groupName: String
    /// The members.
    public var users: [Ref<RoostUser>]

    /// A group value.
    public init(groupName: String, users: [Ref<RoostUser>] = []) {
        self.groupName = groupName
        self.users = users
    }

    private enum Keys: String, CodingKey { case groupName, users }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Keys.self)
        groupName = try container.decodeIfPresent(String.self, forKey: .groupName) ?? ""
        // Members may be references or plain user guids.
        let members = try container.decodeIfPresent([JSON].self, forKey: .users) ?? []
        users = members.compactMap { member in
            if let guid = member.stringValue { return Ref(guid: guid) }
            return member["ffUrl"]?.stringValue.map { Ref(guid: String($0.split(separator: "/").last ?? "")) }
        }
    }
}

extension Roost {
    /// The object's access list, nil when it follows its collection's rules.
    public func accessList<Model: RoostModel>(of object: Stored<Model>) async throws -> AccessList? {
        let response = try await perform(
            TransportRequest(method: "GET", path: Self.objectPath(Model.collection, object.guid) + "/ffACL"))
        let list = try Wire.decode(AccessList.self, from: response.body)
        return list.isEmpty ? nil : list
    }

    /// Gives the object its own access list (needs the right to update it); returns it as stored.
    @discardableResult
    public func setAccessList<Model: RoostModel>(_ list: AccessList, for object: Stored<Model>) async throws
        -> AccessList
    {
        let response = try await perform(
            try Self.jsonRequest("PUT", Self.objectPath(Model.collection, object.guid) + "/ffACL", body: list)
        )
        return try Wire.decode(AccessList.self, from: response.body)
    }

    /// Returns the object to its collection's rules.
    public func removeAccessList<Model: RoostModel>(of object: Stored<Model>) async throws {
        _ = try await perform(
            TransportRequest(
                method: "DELETE", path: Self.objectPath(Model.collection, object.guid) + "/ffACL"))
    }

    /// Creates a group; the server chooses its guid (a guid chosen on the device could squat one
    /// that rules trust), so this needs the server and is never queued.
    public func createGroup(name: String, users: [Ref<RoostUser>] = []) async throws -> Stored<RoostGroup> {
        let body = try Self.fields(of: RoostGroup(groupName: name, users: users))
        let response = try await perform(
            try Self.jsonRequest("POST", "/ff/resources/\(RoostGroup.collection)", body: JSON.object(body)))
        return try Self.decodeObject(
            try Self.objectDocument(response.body, RoostGroup.collection, "new"), as: RoostGroup.self)
    }

    /// Changes the logged-in user's password; the server ends every other session of theirs.
    /// A wrong `current` is 401 `invalid_credentials`; a weak `new` is 400 `weak_password`.
    public func changePassword(current: String, new: String) async throws {
        _ = try await perform(
            try Self.jsonRequest(
                "POST", "/ff/password",
                body: ["currentPassword": current, "newPassword": new] as [String: String]),
            retryingAfterLogin: false)
    }

    /// The objects of `Source` whose `field` refers to `object` (FatFractal's back references),
    /// e.g. the posts whose `user` is this user.
    public func backReferences<Target: RoostModel, Source: RoostModel>(
        to object: Stored<Target>, from source: Source.Type, field: String, start: Int = 0, count: Int = 100
    ) async throws -> [Stored<Source>] {
        guard QueryCondition.isValidField(field) else {
            throw RoostError(
                status: nil, code: RoostError.Code.invalidQuery,
                message:
                    "'\(field)' is not a field path; use letters, digits and '_', with '.' between nested names."
            )
        }
        var path =
            Self.objectPath(Target.collection, object.guid) + "/BackReferences.\(Source.collection).\(field)"
        path += "?count=\(count)" + (start > 0 ? "&start=\(start)" : "")
        let body = try await get(path, cachePolicy: .networkOnly)
        guard case .array(let items)? = try Wire.decode(JSON.self, from: body)["items"] else { return [] }
        return try items.compactMap { item in
            guard case .object(let document) = item else { return nil }
            return try Self.decodeObject(document, as: Source.self)
        }
    }
}
