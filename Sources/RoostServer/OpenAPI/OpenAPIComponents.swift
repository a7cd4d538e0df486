/// The shared schemas of `/openapi.json` (JSON Schema 2020-12, as OpenAPI 3.1 uses). Objects are
/// schemaless, so object schemas name Roost's metadata and allow any other member.
enum OpenAPIComponents {
    /// Schemas kept in each area's file (`OpenAPIComponents+…` / `RouteDocumentation+…`), one line each.
    static let areaSchemas = [
        refreshSchemas, mailSchemas, emailSchemas, signInSchemas, adminSchemas, metadataSchemas,
    ]
    static let text = #"""
        {
          "securitySchemes": {
            "token": {"type": "apiKey", "in": "header", "name": "X-Token",
                      "description": "A session token from /ff/login, /ff/register or /ff/tokens."},
            "bearer": {"type": "http", "scheme": "bearer", "description": "The same token as Authorization: Bearer."}
          },
          "schemas": {
            "Error": {
              "type": "object", "required": ["status", "code", "message"],
              "properties": {
                "status": {"type": "integer"},
                "code": {"type": "string", "description": "Stable: what to branch on (see docs/api.md, Errors)."},
                "message": {"type": "string", "description": "For people; may change."},
                "details": {"type": "object"}
              }
            },
            "FatFractalError": {
              "type": "object", "required": ["statusMessage", "code"],
              "description": "FatFractal's error shape, which its SDKs read.",
              "properties": {"statusMessage": {"type": "string"}, "code": {"type": "string"}, "result": {}}
            },
            "Anything": {},
            "Health": {"type": "object", "required": ["status"], "properties": {"status": {"const": "ok"}}},
            "OpenAPI": {"type": "object", "required": ["openapi", "paths"]},
            "Object": {
              "type": "object", "required": ["guid", "ffUrl", "version"],
              "properties": {
                "guid": {"type": "string"}, "ffUrl": {"type": "string"},
                "createdBy": {"type": ["string", "null"]}, "createdAt": {"type": "integer"},
                "updatedBy": {"type": ["string", "null"]}, "updatedAt": {"type": "integer"},
                "version": {"type": "integer"}
              },
              "additionalProperties": true
            },
            "ObjectInput": {
              "type": "object", "additionalProperties": true,
              "description": "Any JSON object; `guid` may be given on create. Metadata members are the server's.",
              "properties": {"guid": {"type": "string"}}
            },
            "ObjectPage": {
              "type": "object", "required": ["items"],
              "properties": {"items": {"type": "array", "items": {"$ref": "#/components/schemas/Object"}},
                             "total": {"type": "integer"}}
            },
            "AccessList": {
              "type": "object",
              "properties": {
                "readUsers": {"type": "array", "items": {"type": "string"}},
                "readGroups": {"type": "array", "items": {"type": "string"}},
                "writeUsers": {"type": "array", "items": {"type": "string"}},
                "writeGroups": {"type": "array", "items": {"type": "string"}}
              }
            },
            "Registration": {
              "type": "object", "required": ["userName", "password"], "additionalProperties": true,
              "properties": {"userName": {"type": "string"}, "password": {"type": "string"},
                             "email": {"type": "string"}, "deviceId": {"type": "string"}},
              "description": "Other members become the user's profile fields."
            },
            "Credentials": {
              "type": "object", "required": ["password"],
              "properties": {"userName": {"type": "string"}, "email": {"type": "string"},
                             "password": {"type": "string"}, "deviceId": {"type": "string"},
                             "deviceType": {"type": "string"}}
            },
            "PasswordChange": {
              "type": "object", "required": ["currentPassword", "newPassword"],
              "properties": {"currentPassword": {"type": "string"}, "newPassword": {"type": "string"}}
            },
            "Session": {
              "type": "object", "required": ["user", "token"],
              "properties": {"user": {"$ref": "#/components/schemas/Object"}, "token": {"type": "string"},
                             "tokenId": {"type": "string"}, "expiresAt": {"type": "integer"}},
              "additionalProperties": true
            },
            "SessionState": {
              "type": "object", "required": ["loggedIn"],
              "properties": {"loggedIn": {"type": "boolean"}, "user": {"$ref": "#/components/schemas/Object"}}
            },
            "Token": {
              "type": "object", "required": ["id", "userGuid", "deviceId", "expiresAt"],
              "properties": {"id": {"type": "string"}, "userGuid": {"type": "string"},
                             "deviceId": {"type": "string"}, "deviceType": {"type": ["string", "null"]},
                             "createdAt": {"type": "integer"}, "expiresAt": {"type": "integer"},
                             "clientAddress": {"type": ["string", "null"]}, "current": {"type": "boolean"}}
            },
            "TokenPage": {
              "type": "object", "required": ["items"],
              "properties": {"items": {"type": "array", "items": {"$ref": "#/components/schemas/Token"}}}
            },
            "PushRegistration": {
              "type": "object", "required": ["platform", "token", "bundleId"],
              "properties": {"platform": {"enum": ["apns", "fcm"]}, "token": {"type": "string"},
                             "environment": {"enum": ["sandbox", "production"]}, "bundleId": {"type": "string"}}
            },
            "PushDevice": {
              "type": "object", "required": ["userGuid", "deviceId", "platform", "tokenSuffix"],
              "properties": {"userGuid": {"type": "string"}, "deviceId": {"type": "string"},
                             "platform": {"enum": ["apns", "fcm"]}, "environment": {"type": ["string", "null"]},
                             "bundleId": {"type": "string"}, "tokenSuffix": {"type": "string"},
                             "createdAt": {"type": "integer"}, "updatedAt": {"type": "integer"},
                             "receiving": {"type": "boolean"}}
            },
            "PushDevicePage": {
              "type": "object", "required": ["items"],
              "properties": {"items": {"type": "array", "items": {"$ref": "#/components/schemas/PushDevice"}},
                             "next": {"type": ["string", "null"]}}
            },
            "PushRequest": {
              "type": "object",
              "properties": {
                "users": {"type": "array", "items": {"type": "string"}, "maxItems": 1000},
                "devices": {"type": "array", "maxItems": 1000, "items": {"type": "object",
                            "properties": {"userGuid": {"type": "string"}, "deviceId": {"type": "string"}}}},
                "query": {"type": "string"}, "title": {"type": "string"}, "subtitle": {"type": "string"},
                "body": {"type": "string"}, "badge": {"type": "integer"}, "sound": {"type": "string"},
                "data": {"type": "object"}, "collapseId": {"type": "string"}, "threadId": {"type": "string"},
                "priority": {"enum": ["high", "normal"]}, "expiresAt": {"type": "integer"},
                "expiration": {"type": "integer"}, "contentAvailable": {"type": "boolean"}
              }
            },
            "PushQueued": {
              "type": "object", "required": ["id", "devices"],
              "properties": {"id": {"type": "string"}, "devices": {"type": "integer"}}
            },
            "PushStatus": {
              "type": "object", "required": ["id", "deliveries"],
              "properties": {"id": {"type": "string"}, "devices": {"type": "integer"},
                             "deliveries": {"type": "array", "items": {"type": "object"}}}
            }
          }
        }
        """#
}
