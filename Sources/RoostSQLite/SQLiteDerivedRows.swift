import RoostStore

extension DerivedRows {
    /// Writes the rows of a new object, or replaces those of a changed one.
    func write(collection: String, guid: String, replacing: Bool, on connection: SQLiteConnection) throws {
        if let groupMembers {
            if replacing { try connection.run("DELETE FROM group_members WHERE group_guid = \(guid)") }
            for user in groupMembers {
                try connection.run(
                    "INSERT OR IGNORE INTO group_members (group_guid, user_guid) VALUES (\(guid), \(user))")
            }
        }
        if replacing {
            try connection.run("DELETE FROM blob_refs WHERE collection = \(collection) AND guid = \(guid)")
        }
        for reference in blobReferences {
            try connection.run(
                """
                INSERT OR REPLACE INTO blob_refs (collection, guid, member, sha256)
                VALUES (\(collection), \(guid), \(reference.member), \(reference.sha256))
                """)
        }
    }

    /// Removes the rows of a deleted object.
    static func remove(collection: String, guid: String, on connection: SQLiteConnection) throws {
        if collection == DerivedRows.groupCollection {
            try connection.run("DELETE FROM group_members WHERE group_guid = \(guid)")
        }
        try connection.run("DELETE FROM blob_refs WHERE collection = \(collection) AND guid = \(guid)")
    }
}
