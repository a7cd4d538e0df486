extension RouteDocumentation {
    /// FatFractal's app metadata and executeFFDL (docs/fatfractal.md).
    static let metadataRoutes: [String: RouteDocumentation] = [
        "GET /ff/metadata": RouteDocumentation(
            tag: "scripts",
            summary:
                "The app's collections, object types and FatFractal settings (strings \"true\"/\"false\"), as FatFractal.js's getFFDL reads them; administrators also get each collection's rules and the handlers and extensions",
            access: .open,
            responses: [(200, "The metadata (in the dialect, as `result`).", .schema("AppMetadata"))]),
        "POST /ff/metadata": RouteDocumentation(
            tag: "scripts",
            summary:
                "executeFFDL: carry out FFDL statements the import translates (CREATE COLLECTION, DROP COLLECTION, SET, PERMIT, CREATE HANDLER/EXTENSION), all or nothing, for every instance on a shared database (400 ffdl_unsupported, 400 ffdl_invalid, 413 body_too_large)",
            access: .administrator, requestBody: .schema("FFDLRequest"),
            responses: [(200, "What became of each statement.", .schema("FFDLResult"))]),
    ]
}

extension OpenAPIComponents {
    /// The metadata routes' bodies.
    static let metadataSchemas = #"""
        {
          "AppMetadata": {
            "type": "object", "required": ["collectionResources", "objectTypes", "settings"],
            "properties": {
              "collectionResources": {"type": "array", "items": {"type": "object",
                "required": ["collectionName", "objectTypeNames"],
                "properties": {"collectionName": {"type": "string"}, "objectTypeNames": {"type": "array"},
                               "permissions": {"type": "object"}}}},
              "objectTypes": {"type": "array", "items": {"type": "object",
                "required": ["objectTypeName", "fields"],
                "properties": {"objectTypeName": {"type": "string"}, "fields": {"type": "array"}}}},
              "settings": {"type": "object", "additionalProperties": {"enum": ["true", "false"]}},
              "eventHandlers": {"type": "array"}, "extensionResources": {"type": "array"}
            }
          },
          "FFDLRequest": {
            "type": "object", "required": ["ffdl"],
            "properties": {"ffdl": {"type": "string", "maxLength": 65536,
                                    "description": "Statements separated by newlines (CRLF too)."}}
          },
          "FFDLResult": {
            "type": "object", "required": ["statements"],
            "properties": {"statements": {"type": "array", "items": {"type": "object",
              "required": ["line", "text", "outcome", "reason"],
              "properties": {"line": {"type": "integer"}, "text": {"type": "string"},
                             "outcome": {"enum": ["translated", "not needed"]}, "reason": {"type": "string"}}}}}
          }
        }
        """#
}
