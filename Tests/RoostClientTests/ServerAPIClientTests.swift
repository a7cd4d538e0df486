import Foundation
import RoostClient
import RoostTestSupport
import Testing

/// The rest of the server's API through the SDK: references in queries, counts, back
/// references, access lists, groups, password changes and deleting a blob member.
@Suite struct ServerAPIClientTests {
    @Test func referencesCountsAndBackReferences() async throws {
        let server = try await makeServer()
        let alice = try makeClient(port: server.port)
        let me = try await alice.register(userName: "alice", password: "correct horse")
        let other = try await alice.create(Note(text: "not a post"))
        _ = other
        for text in ["one", "two"] {
            _ = try await alice.create(Micropost(text: text, user: Ref(guid: me.guid)))
        }
        let mine = try await alice.query(Micropost.self).where("user", .eq, Ref<RoostUser>(guid: me.guid))
            .sorted(by: "text").page()
        #expect(mine.map(\.text) == ["one", "two"])
        #expect(
            try await alice.query(Micropost.self).where("user", .eq, Ref<RoostUser>(guid: me.guid)).count()
                == 2)
        #expect(
            try await alice.query(Micropost.self).where("user", .eq, Ref<RoostUser>(guid: "nobody")).count()
                == 0)
        let page = try await alice.query(Micropost.self).fetchPage(count: 1, total: true)
        #expect(page.items.count == 1 && page.total == 2)

        let user = try await alice.fetch(RoostUser.self, guid: me.guid)
        let posts = try await alice.backReferences(to: user, from: Micropost.self, field: "user")
        #expect(Set(posts.map(\.text)) == ["one", "two"])
        await #expect(throws: RoostError.self) {
            try await alice.backReferences(to: user, from: Micropost.self, field: "user') or (1")
        }
    }

    @Test func accessListsGroupsAndPasswords() async throws {
        let server = try await makeServer()
        let alice = try makeClient(port: server.port)
        let bob = try makeClient(port: server.port)
        let aliceUser = try await alice.register(userName: "alice", password: "correct horse")
        let bobUser = try await bob.register(userName: "bob", password: "correct horse")
        let note = try await alice.create(Note(text: "private"))

        #expect(try await alice.accessList(of: note) == nil)
        let list = try await alice.setAccessList(AccessList(readUsers: [aliceUser.guid]), for: note)
        #expect(list.readUsers == [aliceUser.guid])
        #expect(try await alice.accessList(of: note)?.readUsers == [aliceUser.guid])
        do {
            _ = try await bob.fetch(Note.self, guid: note.guid, cachePolicy: .networkOnly)
            Issue.record("bob read a note only alice may read")
        } catch let error as RoostError {
            #expect(error.status == 404)
            #expect(error.code == "not_found")
        }
        try await alice.removeAccessList(of: note)
        #expect(try await bob.fetch(Note.self, guid: note.guid, cachePolicy: .networkOnly).text == "private")

        let group = try await alice.createGroup(name: "Editors", users: [Ref(guid: bobUser.guid)])
        #expect(!group.guid.isEmpty)
        #expect(group.value == RoostGroup(groupName: "Editors", users: [Ref(guid: bobUser.guid)]))
        #expect(try await alice.fetch(RoostGroup.self, guid: group.guid).users.map(\.guid) == [bobUser.guid])

        do {
            try await alice.changePassword(current: "wrong horse", new: "battery staple 42")
            Issue.record("a wrong current password was accepted")
        } catch let error as RoostError {
            #expect(error.status == 401)
            #expect(error.code == "invalid_credentials")
        }
        do {
            try await alice.changePassword(current: "correct horse", new: "password")
            Issue.record("a weak password was accepted")
        } catch let error as RoostError {
            #expect(error.status == 400)
            #expect(error.code == "weak_password")
        }
        try await alice.changePassword(current: "correct horse", new: "battery staple 42")
        let again = try makeClient(port: server.port)
        await #expect(throws: RoostError.self) {
            try await again.login(userName: "alice", password: "correct horse")
        }
        #expect(
            try await again.login(userName: "alice", password: "battery staple 42").guid == aliceUser.guid)
    }

    @Test func aBlobMemberIsDeleted() async throws {
        let server = try await makeServer()
        let client = try makeClient(port: server.port)
        let note = try await client.create(Note(text: "with a picture"))
        let uploaded = try #require(
            try await client.upload(Data("png".utf8), contentType: "image/png", to: "image", of: note).stored)
        #expect(try await client.download(member: "image", of: uploaded) == Data("png".utf8))
        try await client.deleteBlob(member: "image", of: uploaded)
        do {
            _ = try await client.download(member: "image", of: uploaded, cachePolicy: .networkOnly)
            Issue.record("a deleted blob was downloaded")
        } catch let error as RoostError {
            #expect(error.status == 404)
        }
        let after = try await client.fetch(Note.self, guid: note.guid)
        #expect(after.metadata.version == 3, "create, upload, delete")
    }
}
