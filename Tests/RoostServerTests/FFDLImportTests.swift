import Foundation
import RoostCore
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
                    "allowNewCollections": false
                  },
                  "collections": {
                    "Star": {},
                    "Vote": {
                      "rules": {
                        "read": "loggedIn",
                        "update": "createdBy eq @user.guid",
                        "delete": "createdBy eq @user.guid"
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
        let outcomes = result.lines.map { "\($0.number) \($0.outcome.rawValue)" }
        #expect(
            outcomes == [
                "1 not needed", "2 not translated", "3 translated", "4 translated", "5 not needed",
                "6 not translated", "7 not translated", "8 translated", "12 not needed", "13 not needed",
                "14 translated", "15 not translated", "16 translated", "17 not translated", "18 translated",
                "19 translated", "20 translated", "21 not translated",
            ])
        // A secret setting's value never reaches the report.
        #expect(result.lines[6].text == "SET ApplePushKeystorePassword <hidden>")
        #expect(!result.lines.contains { $0.text.contains("hunter2") })
        // write:public on FFUser is not carried over silently: it would let anyone edit every user.
        #expect(result.lines[11].reason.contains("anyone change or delete every user"))
    }

    @Test func anEmptyFileMakesAnEmptyDefinition() throws {
        let result = FFDLImport(ffdl: "# nothing\n\n")
        #expect(result.definitionText == "{}\n")
        #expect(result.lines.isEmpty)
    }
}
