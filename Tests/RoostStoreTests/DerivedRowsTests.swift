import Foundation
import RoostJSON
import Testing

@testable import RoostSQLite
@testable import RoostStore

/// Group members and blob references are worked out in Swift before a write; SQLite's own JSON
/// functions defined them before. Both must agree on every shape a document can take.
@Suite("Rows derived from documents")
struct DerivedRowsTests {
    static let userLists = [
        #"["u1", {"ffUrl":"/ff/resources/FFUser/u2"}, {"ffUrl":"/FF/Resources/ffuser/u3"}]"#,
        #"[{"ffUrl":"/ff/resources/Post/x"}, 5, null, true, ["nested"], {"ffUrl":7}, {"other":"u9"}]"#,
        #"{"a":"u4","b":{"ffUrl":"/ff/resources/FFUser/u5"},"c":3}"#,
        #""u6""#, "null", "7", #"["dup","dup",""]"#, #"[{"ffUrl":"/ff/resources/FFUser/\u00e9t\u00e9"}]"#,
    ]

    @Test("group members match json_each over users", arguments: userLists + [nil])
    func groupMembers(users: String?) async throws {
        let store = try SQLiteObjectStore(directory: temporaryDirectory(), collections: .builtIn)
        let document = users.map { #"{"guid":"g","users":\#($0)}"# } ?? #"{"guid":"g"}"#
        let group = object("FFUserGroup", "g", document: document)
        try await store.database.write { connection in
            try connection.run(
                "INSERT INTO objects (collection, guid, document, created_at, updated_at, version) VALUES ('FFUserGroup', 'g', \(document), 1, 1, 1)"
            )
            try connection.run(SQLiteObjectStore.groupMembersInsert(matching: "o.guid = 'g'"))
        }
        let bySQL = try store.database.read { connection in
            try connection.query("SELECT user_guid FROM group_members ORDER BY user_guid") {
                $0.text(0) ?? ""
            }
        }
        #expect(
            Set(try DerivedRows(of: group, collections: .builtIn).groupMembers ?? ["not a group"])
                == Set(bySQL))
        #expect(
            try DerivedRows(of: object("Post", "g", document: document), collections: .builtIn).groupMembers
                == nil)
    }

    @Test("which objects are groups, and how a member is named, is the domain's to say")
    func groupsAreTheDomainsNames() throws {
        let teams = AccountCollections(
            users: "Person", groups: "Team", groupMembers: "people",
            userReferencePrefix: "/ff/resources/Person/")
        let document =
            #"{"people":["p1",{"ffUrl":"/ff/resources/person/p2"},{"ffUrl":"/ff/resources/FFUser/u"}],"users":["u1"]}"#
        #expect(
            try DerivedRows(of: object("Team", "t", document: document), collections: teams).groupMembers == [
                "p1", "p2",
            ])
        #expect(
            try DerivedRows(of: object("FFUserGroup", "g", document: document), collections: teams)
                .groupMembers
                == nil)
        #expect(
            try DerivedRows(of: object("FFUserGroup", "g", document: document), collections: .builtIn)
                .groupMembers == ["u1"])
    }

    static let documents = [
        #"{"guid":"a","photo":{"blob":{"sha256":"ab12","size":3},"url":"/x"},"name":"blob"}"#,
        #"{"guid":"a","photo":{"blob":{"size":3}},"note":{"blob":null},"n":{"blob":{"sha256":null}}}"#,
        #"{"guid":"a","p":{"blob":{"sha256":"s1"}},"q":{"blob":{"sha256":"s2"}},"r":["blob"]}"#,
        #"{"guid":"a","text":"\"blob\": {\"sha256\": \"fake\"}"}"#, #"{"guid":"a"}"#,
    ]

    @Test("blob references match json_each over the members", arguments: documents)
    func blobReferences(document: String) async throws {
        let store = try SQLiteObjectStore(directory: temporaryDirectory(), collections: .builtIn)
        let bySQL = try store.database.read { connection in
            try connection.query(
                """
                SELECT m.key, json_extract(m.value, '$.blob.sha256') FROM json_each(\(document)) AS m
                WHERE m.type = 'object' AND json_extract(m.value, '$.blob.sha256') IS NOT NULL ORDER BY m.key
                """
            ) { "\($0.text(0) ?? "")=\($0.text(1) ?? "")" }
        }
        let derived = try DerivedRows(of: object("Post", "a", document: document), collections: .builtIn)
            .blobReferences
        #expect(derived.map { "\($0.member)=\($0.sha256)" }.sorted() == bySQL)
    }

    @Test("each kind of derived row has a limit, refused before the writer sees the object")
    func limits() async throws {
        func members(_ count: Int, _ member: (Int) -> String) -> String {
            "{" + (0..<count).map(member).joined(separator: ",") + "}"
        }
        let blobs = { (count: Int) in members(count) { #""b\#($0)":{"blob":{"sha256":"s\#($0)"}}"# } }
        let references = { (count: Int) in
            members(count) { #""r\#($0)":{"ffUrl":"/ff/resources/C/g\#($0)"}"# }
        }
        let users = { (count: Int) in
            #"{"users":["# + (0..<count).map { #""u\#($0)""# }.joined(separator: ",") + "]}"
        }
        let cases: [(collection: String, document: (Int) -> String, limit: DerivedRows.Limit)] = [
            ("Post", blobs, .blobMembers), ("Post", references, .references),
            ("FFUserGroup", users, .groupMembers),
        ]
        for (collection, document, limit) in cases {
            let atLimit = try DerivedRows(
                of: object(collection, "a", document: document(limit.maximum)), collections: .builtIn)
            #expect(
                [atLimit.blobReferences.count, atLimit.references.count, atLimit.groupMembers?.count ?? 0]
                    .max()
                    == limit.maximum)
            #expect(throws: StoreError.tooManyRows(limit)) {
                try DerivedRows(
                    of: object(collection, "a", document: document(limit.maximum + 1)), collections: .builtIn)
            }
        }
        let store = try SQLiteObjectStore(directory: temporaryDirectory(), collections: .builtIn)
        await #expect(throws: StoreError.tooManyRows(.blobMembers)) {
            try await store.insert(object("Post", "a", document: blobs(1001)), marking: nil)
        }
        #expect(try await store.object(in: "Post", guid: "a") == nil)
    }

    @Test("writes keep group_members and blob_refs in step, and a delete clears them")
    func rowsFollowWrites() async throws {
        let store = try SQLiteObjectStore(directory: temporaryDirectory(), collections: .builtIn)
        func rows() throws -> [String] {
            try store.database.read { connection in
                try connection.query(
                    "SELECT 'm:' || user_guid FROM group_members UNION ALL SELECT 'b:' || member || '=' || sha256 FROM blob_refs ORDER BY 1"
                ) { $0.text(0) ?? "" }
            }
        }
        var group = object(
            "FFUserGroup", "g", document: #"{"guid":"g","users":["u1","u2"],"p":{"blob":{"sha256":"s"}}}"#)
        try await store.insert(group)
        #expect(try rows() == ["b:p=s", "m:u1", "m:u2"])
        group.document = Array(#"{"guid":"g","users":["u2","u3"]}"#.utf8)
        group.version = 2
        try await store.update(group, expectedVersion: 1)
        #expect(try rows() == ["m:u2", "m:u3"])
        try await store.delete(in: "FFUserGroup", guid: "g", expectedVersion: 2)
        #expect(try rows() == [])
    }
}
