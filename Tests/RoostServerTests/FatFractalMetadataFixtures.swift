import Foundation
import RoostCore
import RoostServer
import RoostTestSupport
import Testing

/// An app in the shape of FatFractal's gettingstarted and DataImport samples (our own scripts in
/// their style, not FatFractal's files): two collections, a cleanup extension that drops what the
/// metadata lists, an import extension only the system user may run.
enum MetadataApp {
    static let systemPassword = "a long system password 1"

    static let module = #"""
        var ff = require('ffef/FatFractal');

        // As gettingstarted's cleanup: every collection but the built-in ones is dropped.
        exports.cleanup = function () {
            var meta = ff.getAppMetaData();
            var keep = ['/FFUser', '/FFUserGroup'];
            var ffdl = '';
            for (var i = 0; i < meta.collectionResources.length; i++) {
                var name = meta.collectionResources[i].collectionName;
                if (keep.indexOf(name) < 0) ffdl += 'DROP COLLECTION ' + name + '\n';
            }
            for (var j = 0; j < meta.objectTypes.length; j++) {
                var type = meta.objectTypes[j].objectTypeName;
                if (type !== 'FFUser' && type !== 'FFUserGroup') ffdl += 'DROP OBJECTTYPE ' + type + '\n';
            }
            var done = ff.executeFFDL(ffdl);
            var r = ff.response();
            r.result = {ran: done.statements.length, settings: meta.settings.AllowNewCollections};
            r.responseCode = '200';
            r.statusMessage = 'cleanup ran ' + done.statements.length + ' ffdl commands.';
        };

        // As DataImport's simpleImport: the system user only, objects created from the body.
        exports.simpleImport = function () {
            if (ff.getActiveUser().guid != 'system') throw {statusCode: 403, statusMessage: 'Nope'};
            var content = ff.getExtensionRequestData().httpContent;
            var data = typeof content === 'string' ? JSON.parse(content) : content;
            var created = 0;
            for (var i = 0; i < data.length; i++) {
                data[i].clazz = 'Thing';
                ff.createObjAtUri(data[i], '/Thing');
                created++;
            }
            ff.response().statusMessage = 'Added ' + created + ' new objects';
        };

        exports.changeAsCaller = function () {
            try {
                return ff.executeFFDL('CREATE COLLECTION /Sneaky');
            } catch (e) {
                return {refused: e.statusCode, code: e.code, message: e.statusMessage};
            }
        };
        """#

    static let definition = #"""
        {
          "settings": {"allowAutoRegistration": true},
          "collections": {
            "Bar": {},
            "Thing": {"rules": {"read": "public", "create": "none", "update": "none", "delete": "none"}}
          },
          "extensions": {
            "cleanup": {"script": "scripts/Setup", "function": "cleanup", "runAs": "system", "secured": false},
            "simpleImport": {"script": "scripts/Setup", "function": "simpleImport", "runAs": "system",
                             "secured": false},
            "changeAsCaller": {"script": "scripts/Setup", "function": "changeAsCaller"}
          }
        }
        """#

    static func makeServer(
        systemPassword: String? = MetadataApp.systemPassword, dataDirectory: String? = nil,
        configure: @escaping (inout ServerConfiguration) -> Void = { _ in }
    ) async throws -> TestServer {
        let parsed = try AppDefinition.parse(Array(definition.utf8), modules: ["scripts/Setup": module])
        return try await TestServer(dataDirectory: dataDirectory) { configuration in
            configuration.appDefinition = parsed
            configuration.passwordHasher = PasswordHasher.cheapForTests()
            configuration.systemPassword = systemPassword
            configure(&configuration)
        }
    }

    /// `Authorization: Basic` for `user:password`, as `curl -u` sends it.
    static func basic(_ user: String = "system", _ password: String = systemPassword) -> (String, String) {
        ("Authorization", "Basic " + Data("\(user):\(password)".utf8).base64EncodedString())
    }

    /// What everyone sees of this app's metadata.
    static var publicMetadata: [String: Any] {
        [
            "collectionResources": [
                ["collectionName": "/FFUser", "objectTypeNames": ["FFUser"]],
                ["collectionName": "/FFUserGroup", "objectTypeNames": ["FFUserGroup"]],
                ["collectionName": "/Bar", "objectTypeNames": ["Bar"]],
                ["collectionName": "/Thing", "objectTypeNames": ["Thing"]],
            ],
            "objectTypes": [
                [
                    "objectTypeName": "FFUser",
                    "fields": [
                        ["fieldName": "userName", "memberType": "STRING"],
                        ["fieldName": "firstName", "memberType": "STRING"],
                        ["fieldName": "lastName", "memberType": "STRING"],
                        ["fieldName": "email", "memberType": "STRING"],
                        ["fieldName": "active", "memberType": "BOOLEAN"],
                        ["fieldName": "groups", "memberType": "GRABBAG", "collectionName": "/FFUserGroup"],
                    ],
                ],
                [
                    "objectTypeName": "FFUserGroup",
                    "fields": [
                        ["fieldName": "groupName", "memberType": "STRING"],
                        ["fieldName": "users", "memberType": "GRABBAG", "collectionName": "/FFUser"],
                    ],
                ],
                ["objectTypeName": "Bar", "fields": [Any]()],
                ["objectTypeName": "Thing", "fields": [Any]()],
            ],
            "settings": [
                "ActivateUsersOnReg": "true", "AllowAutoRegistration": "true", "AllowNewCollections": "true",
                "AllowNewMembers": "true", "AllowNewObjectTypes": "true", "ETaggingEnabled": "true",
                "PushIsInactive": "false",
            ],
        ]
    }
}

/// Whether two JSON values are equal (numbers, strings, arrays and objects as Foundation reads them).
func jsonEqual(_ actual: Any?, _ expected: Any) -> Bool {
    func canonical(_ value: Any) -> Data? {
        try? JSONSerialization.data(withJSONObject: value, options: [.sortedKeys, .fragmentsAllowed])
    }
    guard let actual, let left = canonical(actual) else { return false }
    return left == canonical(expected)
}
