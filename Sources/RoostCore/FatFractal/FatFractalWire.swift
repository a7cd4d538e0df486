import RoostCore
import RoostJSON

/// FatFractal's JSON shapes: the `{statusMessage, result}` envelope, objects with `clazz`, `ffRefs`
/// and `ffUserCanEdit` on the way out, and lenient creates and updates on the way in.
public enum FatFractalWire {
    /// Metadata a FatFractal client echoes in creates and updates; Roost owns it, so the dialect
    /// drops it instead of refusing it (FatFractal's updates carry no `If-Match`: last write wins).
    public static let echoedMetadata: Set<String> =
        Set(ObjectService.metadataFields).union(["ffRL", "ffUserCanEdit", "ffRefs"])

    /// The envelope: `{"statusMessage": …, "result": …}` and any extra members (an error's `code`).
    public static func envelope(_ message: String, _ result: JSONValue, extra: [(String, JSONValue)] = [])
        -> [UInt8]
    {
        JSONWriter.bytes(
            .object(
                JSONObject(uniqueMembers: [("statusMessage", .string(message)), ("result", result)] + extra)))
    }

    /// A Roost error body `{status, code, message, details}` as FatFractal's clients read errors:
    /// `statusMessage` is the sentence; `code` and `details` stay for programs.
    public static func errorEnvelope(_ error: JSONObject) -> [UInt8] {
        var extra: [(String, JSONValue)] = []
        if let code = error["code"] { extra.append(("code", code)) }
        if let details = error["details"], details.objectValue?.isEmpty == false {
            extra.append(("details", details))
        }
        return envelope(error["message"]?.stringValue ?? "Request failed", .null, extra: extra)
    }

    /// A create or update body made acceptable: `guid: null`, a temporary `ffUrl` and echoed
    /// metadata are dropped, and `ffRefs` entries of type FFO become Roost references. On an
    /// update the object's own guid may be echoed too.
    public static func lenientBody(_ body: JSONObject, updating guid: String?) -> JSONObject {
        var fields = body
        if let sent = fields["guid"], sent == .null || (guid != nil && sent.stringValue == guid) {
            fields["guid"] = nil
        }
        let references = fields["ffRefs"]?.arrayValue ?? []
        fields.removeAll { key, _ in key != "guid" && echoedMetadata.contains(key) }
        for entry in references {
            guard let reference = entry.objectValue, reference["type"]?.stringValue == "FFO",
                let name = reference["name"]?.stringValue, let url = reference["url"]?.stringValue
            else { continue }
            // Blob members (FFB) and collections (FFC) are not fields: blobs have their own URL.
            fields[name] = .object(JSONObject(uniqueMembers: [("ffUrl", .string(resourcePath(url)))]))
        }
        return fields
    }

    /// The `ffRefs` entries of type FFB as blobs to copy: FatFractal's clients name a blob member
    /// by its URL, `/ff/resources/C/g/member`, which an object read elsewhere carries along.
    public static func blobCopies(in body: JSONObject) -> [BlobCopy] {
        (body["ffRefs"]?.arrayValue ?? []).compactMap { entry in
            guard let reference = entry.objectValue, reference["type"]?.stringValue == "FFB",
                let name = reference["name"]?.stringValue, let url = reference["url"]?.stringValue
            else { return nil }
            let parts = resourcePath(url).split(separator: "/", omittingEmptySubsequences: false)
            guard parts.count == 6, parts[0].isEmpty, parts[1] == "ff", parts[2] == "resources" else {
                return nil
            }
            return BlobCopy(
                member: name, collection: String(parts[3]), guid: String(parts[4]),
                sourceMember: String(parts[5]))
        }
    }

    /// `/app/ff/resources/C/g` or a full URL → `/ff/resources/C/g`.
    public static func resourcePath(_ url: String) -> String {
        guard let range = url.range(of: "/ff/resources/") else { return url }
        return String(url[range.lowerBound...])
    }

    /// A stored document as FatFractal serves it: references and blob members move to `ffRefs`,
    /// and `clazz`, `ffRL` and `ffUserCanEdit` are added.
    public static func wireObject(_ document: JSONObject, mayEdit: (String, [UInt8], String?) -> Bool)
        -> JSONValue
    {
        guard let ffUrl = document["ffUrl"]?.stringValue, let collection = collectionName(ffUrl) else {
            return .object(document)
        }
        var object = JSONObject()
        var refs: [JSONValue] = []
        for (key, value) in document.members {
            if let blob = value.objectValue?["blob"]?.objectValue, value.objectValue?.count == 1 {
                refs.append(
                    reference(
                        key, "FFB", ffUrl + "/" + key,
                        mime: blob["contentType"]?.stringValue ?? "application/octet-stream"))
            } else if let target = value.objectValue, target.count == 1,
                let url = target["ffUrl"]?.stringValue
            {
                refs.append(reference(key, "FFO", url))
            } else {
                object[key] = value
            }
        }
        if object["clazz"] == nil { object["clazz"] = .string(collection) }
        object["ffRL"] = .string("/" + collection)
        object["ffRefs"] = .array(refs)
        object["ffUserCanEdit"] = .bool(
            mayEdit(collection, JSONWriter.bytes(.object(document)), document["createdBy"]?.stringValue))
        return .object(object)
    }

    private static func reference(_ name: String, _ type: String, _ url: String, mime: String? = nil)
        -> JSONValue
    {
        var members: [(String, JSONValue)] = [
            ("name", .string(name)), ("type", .string(type)), ("url", .string(url)),
        ]
        if let mime { members.append(("mime", .string(mime))) }
        return .object(JSONObject(uniqueMembers: members))
    }

    /// `C` of `/ff/resources/C/guid`.
    public static func collectionName(_ ffUrl: String) -> String? {
        let parts = ffUrl.split(separator: "/")
        guard parts.count >= 4, parts[parts.count - 4] == "ff", parts[parts.count - 3] == "resources" else {
            return nil
        }
        return String(parts[parts.count - 2])
    }

    /// An answer's JSON as the `result`: objects translated, pages as arrays.
    public static func result(of body: JSONValue, mayEdit: (String, [UInt8], String?) -> Bool) -> JSONValue {
        guard case .object(let object) = body else { return body }
        if object["ffUrl"] != nil, object["guid"] != nil { return wireObject(object, mayEdit: mayEdit) }
        if object.count <= 2, case .array(let items)? = object["items"] {
            return .array(items.map { $0.objectValue.map { wireObject($0, mayEdit: mayEdit) } ?? $0 })
        }
        return body
    }
}

extension JSONValue {
    /// The elements when this is an array.
    public var arrayValue: [JSONValue]? {
        if case .array(let elements) = self { return elements }
        return nil
    }
}
