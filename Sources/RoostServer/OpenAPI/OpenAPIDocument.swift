import RoostHTTP
import RoostJSON
import RoostStore

/// `/openapi.json`: OpenAPI 3.1, generated once when the server starts from the routes the router
/// declares (what routes is what is described) and their ``RouteDocumentation``.
enum OpenAPIDocument {
    static let pattern = "/openapi.json"

    /// The document for `routes` (method and pattern), with `undocumented` receiving each route
    /// that has no description (it is still listed, by its path alone).
    static func make(routes: [(method: String, pattern: String)], undocumented: (String) -> Void = { _ in })
        -> JSONValue
    {
        var paths = JSONObject()
        for route in routes {
            let key = "\(route.method) \(route.pattern)"
            let documentation = RouteDocumentation.byRoute[key]
            if documentation == nil { undocumented(key) }
            let (path, names) = openAPIPath(route.pattern)
            var item = paths[path]?.objectValue ?? JSONObject()
            item[route.method.lowercased()] = .object(
                operation(documentation, method: route.method, pattern: route.pattern, pathNames: names))
            paths[path] = .object(item)
        }
        var components: JSONValue
        do {
            components = try JSONParser.parse(OpenAPIComponents.text)
            // Each area's schemas, from its own file.
            for text in OpenAPIComponents.areaSchemas {
                guard case .object(var all) = components, var schemas = all["schemas"]?.objectValue,
                    case .object(let added) = try JSONParser.parse(text)
                else { preconditionFailure("OpenAPIComponents: an area's schemas are not an object") }
                for member in added.members { schemas[member.key] = member.value }
                all["schemas"] = .object(schemas)
                components = .object(all)
            }
        } catch {
            preconditionFailure("OpenAPIComponents.text is not JSON: \(error)")
        }
        return .object(
            JSONObject(uniqueMembers: [
                ("openapi", .string("3.1.0")),
                (
                    "info",
                    .object(
                        JSONObject(uniqueMembers: [
                            ("title", .string("Roost")), ("version", .string(RoostRelease.version)),
                            (
                                "description",
                                .string(
                                    "A self-hosted backend for apps: schemaless objects behind FatFractal's URLs and query language, accounts, access rules, blobs, realtime events, scripts and push. Errors are `Error` objects with a stable `code`."
                                )
                            ),
                        ]))
                ),
                ("paths", .object(paths)),
                ("components", components),
            ]))
    }

    /// `/ff/resources/:collection/*query` → `/ff/resources/{collection}/{query}` and its names.
    static func openAPIPath(_ pattern: String) -> (path: String, names: [String]) {
        var names: [String] = []
        let segments = pattern.split(separator: "/", omittingEmptySubsequences: true).map { segment in
            guard let first = segment.first, first == ":" || first == "*" else { return String(segment) }
            names.append(String(segment.dropFirst()))
            return "{\(segment.dropFirst())}"
        }
        return ("/" + segments.joined(separator: "/"), names)
    }

    private static func operation(
        _ documentation: RouteDocumentation?, method: String, pattern: String, pathNames: [String]
    ) -> JSONObject {
        var operation = JSONObject()
        operation["operationId"] = .string(operationID(method: method, pattern: pattern))
        var parameters: [JSONValue] = pathNames.map { name in
            parameter(name: name, location: "path", type: "string", description: nil, required: true)
        }
        guard let documentation else {
            operation["parameters"] = .array(parameters)
            operation["responses"] = .object(JSONObject(uniqueMembers: [("default", errorResponse("Error"))]))
            return operation
        }
        operation["summary"] = .string(documentation.summary)
        operation["tags"] = .array([.string(documentation.tag)])
        parameters += documentation.parameters.map {
            parameter(
                name: $0.name, location: $0.location, type: $0.type, description: $0.description,
                required: false)
        }
        operation["parameters"] = .array(parameters)
        switch documentation.access {
        case .open: operation["security"] = .array([])
        case .rules:
            // Anonymous callers get what the rules give the public; a token gives the user's rights.
            operation["security"] = .array([.object(JSONObject()), token("token"), token("bearer")])
        case .loggedIn, .administrator: operation["security"] = .array([token("token"), token("bearer")])
        }
        if documentation.access == .administrator {
            operation["description"] = .string("Administrators only: anyone else gets 403 `forbidden`.")
        }
        if let body = documentation.requestBody, let content = content(body) {
            operation["requestBody"] = .object(
                JSONObject(uniqueMembers: [("required", .bool(true)), ("content", content)]))
        }
        var responses = JSONObject()
        for answer in documentation.responses {
            var response = JSONObject(uniqueMembers: [("description", .string(answer.description))])
            if let content = content(answer.body) { response["content"] = content }
            responses[String(answer.status)] = .object(response)
        }
        responses["default"] = errorResponse(documentation.errors)
        operation["responses"] = .object(responses)
        return operation
    }

    private static func operationID(method: String, pattern: String) -> String {
        let words = pattern.split(whereSeparator: { "/:*.-".contains($0) }).map { word in
            word.prefix(1).uppercased() + word.dropFirst()
        }
        return method.lowercased() + words.joined()
    }

    private static func parameter(
        name: String, location: String, type: String, description: String?, required: Bool
    )
        -> JSONValue
    {
        var parameter = JSONObject(uniqueMembers: [
            ("name", .string(name)), ("in", .string(location)), ("required", .bool(required)),
            ("schema", .object(JSONObject(uniqueMembers: [("type", .string(type))]))),
        ])
        if let description { parameter["description"] = .string(description) }
        return .object(parameter)
    }

    private static func token(_ scheme: String) -> JSONValue {
        .object(JSONObject(uniqueMembers: [(scheme, .array([]))]))
    }

    private static func reference(_ name: String) -> JSONValue {
        .object(JSONObject(uniqueMembers: [("$ref", .string("#/components/schemas/\(name)"))]))
    }

    private static func content(_ body: RouteDocumentation.Body) -> JSONValue? {
        let (type, schema): (String, JSONValue)
        switch body {
        case .schema(let name): (type, schema) = ("application/json", reference(name))
        case .arrayOf(let name):
            (type, schema) = (
                "application/json",
                .object(JSONObject(uniqueMembers: [("type", .string("array")), ("items", reference(name))]))
            )
        case .bytes: (type, schema) = ("*/*", .object(JSONObject()))
        case .text:
            (type, schema) = ("text/plain", .object(JSONObject(uniqueMembers: [("type", .string("string"))])))
        case .eventStream:
            (type, schema) = (
                "text/event-stream", .object(JSONObject(uniqueMembers: [("type", .string("string"))]))
            )
        case .empty: return nil
        }
        return .object(
            JSONObject(uniqueMembers: [(type, .object(JSONObject(uniqueMembers: [("schema", schema)])))]))
    }

    private static func errorResponse(_ schema: String) -> JSONValue {
        .object(
            JSONObject(uniqueMembers: [
                ("description", .string("An error, with a stable code.")),
                (
                    "content",
                    .object(
                        JSONObject(uniqueMembers: [
                            (
                                "application/json",
                                .object(JSONObject(uniqueMembers: [("schema", reference(schema))]))
                            )
                        ]))
                ),
            ]))
    }
}

/// Serves the document, generated once from the routes declared so far (register it last).
struct OpenAPIRoutes {
    func register(in routes: APIRoutes, table: RouteTable) {
        let declared = table.router.declaredRoutes.map { (method: $0.method.rawValue, pattern: $0.pattern) }
        let keys = Set(declared.map { "\($0.method) \($0.pattern)" } + ["GET \(OpenAPIDocument.pattern)"])
        assert(
            RouteDocumentation.byRoute.keys.allSatisfy(keys.contains),
            "described routes no router declares: \(RouteDocumentation.byRoute.keys.filter { !keys.contains($0) })"
        )
        let bytes = JSONWriter.bytes(
            OpenAPIDocument.make(routes: declared + [(method: "GET", pattern: OpenAPIDocument.pattern)]))
        routes.open.on(.get, OpenAPIDocument.pattern) { _, _ in
            var headers = HTTPHeaders()
            headers.set("Cache-Control", "public, max-age=300")
            return Response.json(200, bytes, headers: headers)
        }
    }
}
