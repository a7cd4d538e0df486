import Foundation
import RoostCore
import RoostJSON
import Testing

/// The FFDL statements that change an app (FatFractal's `executeFFDL`), read by the importer
/// itself: `DROP …`, CRLF line ends, and the system user's settings, which never carry a password over.
@Suite("FFDL changes") struct FFDLChangeTests {
    @Test func theImportReadsDropsCRLFAndTheSystemUsersSettings() throws {
        let result = FFDLImport(
            ffdl:
                "SET AllowSystemUserToLogin true\r\nSET SystemUserPassword systemsystem\r\nCREATE COLLECTION /Foos\r\nCREATE COLLECTION /Bars\r\nDROP COLLECTION /Bars\r\nDROP OBJECTTYPE Bar\r\nDROP COLLECTION /FFUser\r\nDROP INDEX x\r\n"
        )
        #expect(
            result.lines.map { "\($0.number) \($0.outcome.rawValue): \($0.text) — \($0.reason)" } == [
                "1 not translated: SET AllowSystemUserToLogin true — the system user logs in only when the server has --system-password-file (docs/fatfractal.md)",
                "2 not translated: SET SystemUserPassword <hidden> — the system user's password is never read from the definition: give it to the server with roost serve --system-password-file (docs/fatfractal.md)",
                "3 translated: CREATE COLLECTION /Foos — collections.Foos",
                "4 translated: CREATE COLLECTION /Bars — collections.Bars",
                "5 translated: DROP COLLECTION /Bars — removes collections.Bars; its objects stay",
                "6 not needed: DROP OBJECTTYPE Bar — Roost is schemaless: object types need no declaration",
                "7 not translated: DROP COLLECTION /FFUser — FFUser is built in: it cannot be dropped",
                "8 not translated: DROP INDEX x — Roost has no equivalent of DROP INDEX",
            ])
        #expect(result.definitionText == "{\n  \"collections\": {\n    \"Foos\": {}\n  }\n}\n")
        #expect(result.droppedCollections == ["Bars"])
    }

    @Test func aChangeKeepsWhatTheDefinitionSaysAndMergesRules() throws {
        let current = try AppDefinition.parse(
            Array(
                #"{"compatibility": "fatfractal", "collections": {"Note": {"rules": {"read": "loggedIn"}, "indexes": ["title"]}}}"#
                    .utf8))
        let change = try FFDLChange(
            applying: "PERMIT create:system write:creator ON /Note\nSET CORS https://app.example.com",
            to: current)
        #expect(
            String(decoding: change.text, as: UTF8.self) == """
                {
                  "compatibility": "fatfractal",
                  "collections": {
                    "Note": {
                      "rules": {
                        "read": "loggedIn",
                        "create": "none",
                        "update": "createdBy eq @user.guid",
                        "delete": "createdBy eq @user.guid"
                      },
                      "indexes": ["title"]
                    }
                  },
                  "cors": {
                    "allowedOrigins": ["https://app.example.com"]
                  }
                }

                """)
        #expect(change.definition.compatibility == .fatfractal)
        #expect(change.definition.cors.allowedOrigins == ["https://app.example.com"])
        // Code sent over HTTP never runs: only functions of the app's own modules.
        #expect(
            throws: RoostError(
                status: 400, code: .ffdlUnsupported,
                message: "Roost does not carry out this FFDL statement (see details); nothing was changed.",
                details: JSONObject(uniqueMembers: [
                    (
                        "statements",
                        .array([
                            .object(
                                JSONObject(uniqueMembers: [
                                    ("line", .integer(1)),
                                    (
                                        "text",
                                        .string("CREATE EXTENSION /Run UNSECURED AS javascript:print(1);")
                                    ),
                                    (
                                        "reason",
                                        .string(
                                            "executeFFDL adds handlers and extensions that call a function of the app's own script modules (require('scripts/M').f()), never inline code"
                                        )
                                    ),
                                ]))
                        ])
                    )
                ]))
        ) {
            _ = try FFDLChange(
                applying: "CREATE EXTENSION /Run UNSECURED AS javascript:print(1);", to: current)
        }
        // Nothing to carry out is no change at all.
        let empty = try FFDLChange(applying: "", to: current)
        #expect(empty.lines.isEmpty)
        #expect(empty.definition.collections["Note"]?.indexes.count == 1)
    }
}
