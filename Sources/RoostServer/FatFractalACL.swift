import RoostCore
import RoostHTTP
import RoostJSON

/// `PUT …/ffACL` as FatFractal's clients send it: no body resets the object to the collection's
/// rules (FatFractal's `setDefaultPermission`), and `setPermission` lists FFUser and FFUserGroup
/// objects (or `null`) where Roost takes guids.
enum FatFractalACL {
    static func translate(_ request: inout Request) throws {
        let text = request.body.filter { ![9, 10, 13, 32].contains($0) }
        if text.isEmpty || text == Array("null".utf8) {
            request.method = .delete
            request.body = []
            return
        }
        var lists = JSONObject()
        for (key, value) in try ObjectRoutes.bodyObject(request).members {
            guard case .array(let entries) = value else {
                lists[key] = value == .null ? .array([]) : value
                continue
            }
            lists[key] = .array(entries.map(guid(of:)))
        }
        request.body = JSONWriter.bytes(.object(lists))
    }

    /// A user or group object's guid (from `guid`, else the end of its `ffUrl`); anything else as sent.
    static func guid(of entry: JSONValue) -> JSONValue {
        guard let object = entry.objectValue else { return entry }
        if let guid = object["guid"]?.stringValue { return .string(guid) }
        if let url = object["ffUrl"]?.stringValue, let last = url.split(separator: "/").last {
            return .string(String(last))
        }
        return entry
    }
}
