import Foundation
import RoostCore
import RoostJSON
import RoostTestSupport
import Testing

/// `roost app import`: FatFractal's application.ffdl into roost.json, nothing dropped silently.
@Suite("FFDL import") struct FFDLImportTests {
    /// Written in the shape of FatFractal's public samples (hoodyoodoo's three variants), with
    /// every kind of statement they use.
    static let sample = """
        SET ETaggingEnabled true
        SET LogLevel                    INFO
        SET AllowAutoRegistration       true
        SET AllowNewCollections         false
        SET AllowNewMembers             true
        SET PushIsInactive              true
        SET ApplePushKeystorePassword   hunter2
        SET CORS http://localhost https://app.example.com/

        # comments and blank lines say nothing

        CREATE OBJECTTYPE Star   (name string, photo BYTEARRAY image/jpeg)
        CREATE OBJECTTYPE Vote   (pickedGuid string)
        CREATE COLLECTION /Star OBJECTTYPE Star
        permit read:public write:public on /FFUser
        PERMIT read:loggedin write:creator ON /Vote
        PERMIT read:object.readers ON /Secret
        CREATE COLLECTION /Vote OBJECTTYPE Vote
        CREATE HANDLER VoteCreate POST ON /Vote Create as javascript:require('scripts/Votes').onCreate(FF_EVENT_DATA_JSON);
        CREATE EXTENSION /Stats AS javascript:require('scripts/Stats').run(FF_EXTENSION_REQUEST_DATA_JSON);
        CREATE ALIAS mine on FFUser as BackReferences.Star.owner
        """

    @Test func translatesWhatRoostHasAndListsTheRest() throws {
        let result = FFDLImport(ffdl: Self.sample)
        #expect(
            result.definitionText == """
                {
                  "cors": {
                    "allowedOrigins": ["http://localhost","https://app.example.com"]
                  },
                  "settings": {
                    "allowAutoRegistration": true,
                    "allowNewCollections": false,
                    "pushInactive": true
                  },
                  "collections": {
                    "Star": {},
                    "Vote": {
                      "rules": {
                        "read": "loggedIn",
                        "update": "createdBy eq @user.guid",
                        "delete": "createdBy eq @user.guid"
                      }
                    },
                    "Secret": {
                      "rules": {
                        "read": "none",
                        "create": "none",
                        "update": "none",
                        "delete": "none"
                      }
                    }
                  },
                  "handlers": {
                    "VoteCreate": {
                      "collection": "Vote",
                      "events": ["create"],
                      "phase": "post",
                      "script": "scripts/Votes",
                      "function": "onCreate",
                      "runAs": "system"
                    }
                  },
                  "extensions": {
                    "Stats": {
                      "script": "scripts/Stats",
                      "function": "run",
                      "runAs": "system"
                    }
                  }
                }

                """)
        // What it made is a valid definition (with the script files it names).
        let definition = try AppDefinition.parse(
            Array(result.definitionText.utf8), modules: ["scripts/Votes": "", "scripts/Stats": ""])
        #expect(definition.settings.allowAutoRegistration)
        #expect(!definition.settings.allowNewCollections)
        #expect(definition.settings.pushInactive)
        let outcomes = result.lines.map { "\($0.number) \($0.outcome.rawValue)" }
        #expect(
            outcomes == [
                "1 not needed", "2 not translated", "3 translated", "4 translated", "5 not needed",
                "6 translated", "7 not translated", "8 translated", "12 not needed", "13 not needed",
                "14 translated", "15 not translated", "16 translated", "17 not translated", "18 translated",
                "19 translated", "20 translated", "21 not translated",
            ])
        // A secret setting's value never reaches the report.
        #expect(result.lines[6].text == "SET ApplePushKeystorePassword <hidden>")
        #expect(!result.lines.contains { $0.text.contains("hunter2") })
        // write:public on FFUser is not carried over silently: it would let anyone edit every user.
        #expect(
            result.lines[11].reason.contains("anyone, even without logging in, change or delete every user"))
        // What FatFractal restricted in a way Roost cannot say is closed, never left open.
        #expect(
            result.lines[13].reason.hasPrefix(
                "'object.readers' has no Roost rule: collections.Secret is closed"))
    }

    /// gkc/fatfractal-code-samples' PasswordReset: the guids of these objects are the reset secrets.
    static let passwordReset = """
        CREATE OBJECTTYPE PasswordResetToken (userGuid STRING)
        CREATE COLLECTION /PasswordResetToken OBJECTTYPE PasswordResetToken
        PERMIT create:system.admins read:system.admins write:system.admins ON /PasswordResetToken
        """

    @Test func systemAdminsMeansAdministratorsOnly() throws {
        let result = FFDLImport(ffdl: Self.passwordReset)
        let none = JSONValue.string("none")
        #expect(
            result.definition["collections"]?.objectValue?["PasswordResetToken"]?.objectValue?["rules"]
                == .object(
                    JSONObject(uniqueMembers: [
                        ("create", none), ("read", none), ("update", none), ("delete", none),
                    ])))
        #expect(result.lines.map(\.outcome) == [.notNeeded, .translated, .translated])
    }

    @Test(arguments: [
        "PERMIT read:system.users ON /Notes", "PERMIT read:system.editors write:loggedin ON /Notes",
        "PERMIT read:object.readers write:object.writers ON /Notes", "PERMIT read:loggedin,nobody ON /Notes",
        "PERMIT read:public write ON /Notes", "PERMIT read:public change:loggedin ON /Notes",
    ])
    func whatHasNoRoostRuleClosesTheCollection(line: String) throws {
        let result = FFDLImport(ffdl: "PERMIT read:public write:public ON /Notes\n" + line)
        let rules = result.definition["collections"]?.objectValue?["Notes"]?.objectValue?["rules"]?
            .objectValue
        #expect(rules?.members.map(\.key) == ["read", "create", "update", "delete"])
        #expect(rules?.members.allSatisfy { $0.value == .string("none") } == true)
        #expect(result.lines[1].outcome == .notTranslated)
        #expect(
            result.lines[1].reason.hasSuffix(
                "collections.Notes is closed (every rule none: only administrators and system scripts) until you write its rules in roost.json"
            ))
    }

    @Test func aListOfPrincipalsBecomesOneRule() throws {
        let result = FFDLImport(
            ffdl: "PERMIT read:loggedin,system.admins write:creator,system create:none ON /Notes")
        let rules = result.definition["collections"]?.objectValue?["Notes"]?.objectValue?["rules"]?
            .objectValue
        #expect(rules?["read"] == .string("loggedIn"))
        #expect(rules?["update"] == .string("createdBy eq @user.guid"))
        #expect(rules?["create"] == .string("none"))
        let mixed = FFDLImport(ffdl: "PERMIT read:creator,loggedin ON /Notes")
        #expect(
            mixed.definition["collections"]?.objectValue?["Notes"]?.objectValue?["rules"]?.objectValue?[
                "read"]
                == .string("(createdBy eq @user.guid) or loggedIn"))
        _ = try AppDefinition.parse(Array(mixed.definitionText.utf8), modules: [:])
    }

    @Test func writeByEveryoneOnGroupsIsTranslatedWithAWarning() throws {
        let result = FFDLImport(ffdl: "PERMIT read:loggedin write:loggedin ON /FFUserGroup")
        #expect(result.lines[0].outcome == .translated)
        #expect(
            result.lines[0].warning
                == "any logged-in user may change or delete every group the definition does not declare, members included, and rules and access lists trust groups: declare the groups your app relies on (\"groups\") or use write:creator"
        )
        let objects = FFDLImport(ffdl: "PERMIT write:public ON /Notes")
        #expect(
            objects.lines[0].warning
                == "anyone, even without logging in, may change or delete every object in Notes, as FatFractal allowed"
        )
        #expect(FFDLImport(ffdl: "PERMIT write:creator ON /FFUserGroup").lines[0].warning == nil)
    }

    @Test("roost app import prints the warning and the closed collection's reason")
    func theCommandSaysSo() async throws {
        let file = TestServer.makeTemporaryDirectory() + "/application.ffdl"
        try Data(
            "PERMIT write:loggedin ON /FFUserGroup\nPERMIT read:system.users ON /Notes\n".utf8
        ).write(to: URL(fileURLWithPath: file))
        let result = try await runRoost(["app", "import", file])
        #expect(result.status == 0)
        #expect(result.errorOutput.contains("\(file):1: warning: PERMIT write:loggedin ON /FFUserGroup\n"))
        #expect(
            result.errorOutput.contains(
                "\(file):2: not translated: PERMIT read:system.users ON /Notes\n    'system.users' has no Roost rule: collections.Notes is closed"
            ))
        #expect(result.output.contains(#""read": "none""#))
    }

    @Test func writeByAnyUserOnUsersIsNotCarriedOver() throws {
        let result = FFDLImport(ffdl: "PERMIT read:loggedin write:loggedin ON /FFUser")
        #expect(result.lines[0].outcome == .notTranslated)
        #expect(
            result.lines[0].reason.hasPrefix(
                "write:loggedIn on FFUser lets any logged-in user change or delete every user"))
        #expect(result.definition["collections"] == nil)
    }

    @Test("after importing the PasswordReset sample, only administrators touch reset tokens")
    func importedResetTokensAreClosedOverHTTP() async throws {
        let world = try await PermissionWorld.make(
            definition: FFDLImport(ffdl: Self.passwordReset).definitionText)
        let made = try await world.send(
            .admin, "POST", "/ff/resources/PasswordResetToken", json: #"{"userGuid":"x"}"#)
        #expect(made.status == 201)
        let guid = try #require(made.json["guid"] as? String)
        let create = try await world.send(
            .other, "POST", "/ff/resources/PasswordResetToken", json: #"{"userGuid":"x"}"#)
        #expect(create.status == 403)
        #expect(create.json["code"] as? String == "forbidden")
        let anonymous = try await world.send(
            .anonymous, "POST", "/ff/resources/PasswordResetToken", json: "{}")
        #expect(anonymous.status == 401)
        for role in [Role.anonymous, .other] {
            let list = try await world.send(role, "GET", "/ff/resources/PasswordResetToken")
            #expect(PermissionWorld.guids(list).isEmpty, "\(role): \(list.text)")
            let one = try await world.send(role, "GET", "/ff/resources/PasswordResetToken/\(guid)")
            #expect(one.status == 404)
        }
        let listed = try await world.send(.admin, "GET", "/ff/resources/PasswordResetToken")
        #expect(PermissionWorld.guids(listed) == [guid])
    }

    @Test func anEmptyFileMakesAnEmptyDefinition() throws {
        let result = FFDLImport(ffdl: "# nothing\n\n")
        #expect(result.definitionText == "{}\n")
        #expect(result.lines.isEmpty)
    }
}
