extension RouteDocumentation {
    /// What the dashboard (`/_/`) and the command line read as administrators.
    static let adminRoutes: [String: RouteDocumentation] = [
        "GET /ff/admin/collections": RouteDocumentation(
            tag: "administration",
            summary:
                "The collections by name (at most 200, `truncated` past that) with their object counts; a count stops at 10,000 (`exact: false`) unless `exact=1`",
            access: .administrator,
            parameters: [
                Parameter(
                    name: "exact", type: "string",
                    description: "`1`: count every object of every collection listed (reads them all).")
            ],
            responses: [(200, "`items`: one per collection.", .schema("CollectionList"))]),
        "GET /ff/admin/collections/:collection/objects": RouteDocumentation(
            tag: "administration",
            summary:
                "A collection's objects in creation order, by keyset cursor (400 invalid_parameter for a bad cursor or limit, invalid_query with the column for a bad filter)",
            access: .administrator,
            parameters: [
                Parameter(name: "after", type: "string", description: "A page's `next`: the page after it."),
                Parameter(
                    name: "before", type: "string", description: "A page's `previous`: the page before it."),
                Parameter(
                    name: "limit", type: "integer",
                    description: "At most this many (default 50, at most 200)."),
                Parameter(
                    name: "filter", type: "string",
                    description: "A query in Roost's language, such as `age gt 30 and name matches '^A'`."),
            ],
            responses: [(200, "A page and the cursors beside it.", .schema("ObjectCursorPage"))]),
    ]
}

extension OpenAPIComponents {
    /// The admin routes' answers.
    static let adminSchemas = #"""
        {
          "CollectionList": {
            "type": "object", "required": ["items", "truncated", "countLimit"],
            "properties": {
              "items": {"type": "array", "items": {
                "type": "object", "required": ["name", "count", "exact"],
                "properties": {"name": {"type": "string"}, "count": {"type": "integer"},
                               "exact": {"type": "boolean",
                                         "description": "false: the collection holds at least count objects."}}}},
              "truncated": {"type": "boolean"},
              "countLimit": {"type": "integer"}
            }
          },
          "ObjectCursorPage": {
            "type": "object", "required": ["items", "next", "previous"],
            "properties": {
              "items": {"type": "array", "items": {"$ref": "#/components/schemas/Object"}},
              "next": {"type": ["string", "null"], "description": "An opaque cursor; null on the last page."},
              "previous": {"type": ["string", "null"], "description": "An opaque cursor; null on the first page."}
            }
          }
        }
        """#
}
