import Foundation
import RoostTestSupport
import Testing

/// Rules whose dotted paths cross references: neither the SQL list filter nor the in-memory check
/// of a single read may look through a reference (a rule judges the object itself), and the two
/// must agree object by object, however the references point.
@Suite("Rules that reach through references")
struct ReferenceRuleTests {
    static let rules = [
        "author.userName eq 'bob'", "author.guid eq @user.guid",
        "not (author.ffUrl eq null) and note.secret ne 'x'", "note.pin gt 3 or author.admin eq true",
        "note.tags contains_any 'x' or note.text matches '^ab'",
    ]

    @Test("SQL lists and single reads agree on rules with paths through references", arguments: rules)
    func agree(_ rule: String) async throws {
        let definition = #"""
            {"settings": {"allowNewCollections": true},
             "collections": {"Doc": {"rules": {"read": "\#(rule)", "create": "public"}},
                             "Note": {"rules": {"create": "public"}}}}
            """#
        let world = try await PermissionWorld.make(definition: definition)
        var generator = SystemRandomNumberGenerator()
        // Notes whose fields would satisfy the rules if a reference were followed.
        for (index, note) in [
            #"{"secret":"x","pin":5,"tags":["x"],"text":"abc"}"#, #"{"secret":"y","pin":1,"tags":"x y"}"#,
        ].enumerated() {
            let created = try await world.send(.other, "POST", "/ff/resources/Note", json: note)
            #expect(created.status == 201, "note \(index): \(created.text)")
        }
        let notes = PermissionWorld.guids(try await world.send(.other, "GET", "/ff/resources/Note"))
        let userURLs = [Role.owner, .other, .member].map { "/ff/resources/FFUser/\(world.guids[$0]!)" }
        let authors =
            userURLs.map { #"{"ffUrl":"\#($0)"}"# } + [
                #"{"ffUrl":"\#(userURLs[1])","userName":"bob","guid":"\#(world.guids[.other]!)"}"#,
                #""\#(userURLs[1])""#, "null",
            ]
        let noteValues =
            notes.map { #"{"ffUrl":"/ff/resources/Note/\#($0)"}"# } + [
                #"{"secret":"y","pin":9,"tags":["x"],"text":"abz"}"#, #""x""#,
            ]
        for index in 0..<40 {
            var fields = [#""guid":"d\#(index)""#]
            if Bool.random(using: &generator) {
                fields.append(#""author":\#(authors.randomElement(using: &generator)!)"#)
            }
            if Bool.random(using: &generator) {
                fields.append(#""note":\#(noteValues.randomElement(using: &generator)!)"#)
            }
            let created = try await world.send(
                .anonymous, "POST", "/ff/resources/Doc", json: "{" + fields.joined(separator: ",") + "}")
            #expect(created.status == 201, "\(created.text)")
        }
        for role in [Role.anonymous, .other, .member, .owner] {
            let listed = PermissionWorld.guids(
                try await world.send(role, "GET", "/ff/resources/Doc?count=1000"))
            var readable = Set<String>()
            for index in 0..<40
            where try await world.send(role, "GET", "/ff/resources/Doc/d\(index)").status == 200 {
                readable.insert("d\(index)")
            }
            #expect(listed == readable, "\(rule) as \(role)")
        }
        await world.server.stop()
    }
}
