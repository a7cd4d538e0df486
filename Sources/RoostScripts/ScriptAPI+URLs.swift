import Foundation
import RoostCore
import RoostJSON
import RoostQuery

/// What a script's URL names: a collection, one object, or a query (`(…)`, possibly followed by
/// `/member` to traverse references), in FatFractal's spellings: `/ff/resources/C/…`, `/C/…`,
/// `C/…`, `/<app>/ff/resources/C/…` or `http(s)://host[/<app>]/ff/resources/C/…`.
struct ScriptAddress: Equatable {
    enum Target: Equatable {
        case collection
        case object(guid: String)
        case query(String)
    }

    let collection: String
    let target: Target
    /// Whether the query draws one object at random (`guid eq random(guid)`).
    let picksRandom: Bool

    init(_ url: String, call: ScriptCall, position: Int, maxLength: Int) throws {
        guard !url.isEmpty else { throw call.invalid(position, "must not be an empty URL") }
        guard url.utf8.count <= maxLength else {
            throw call.invalid(position, "is a URL over \(maxLength) bytes")
        }
        guard let rest = Self.resourcePath(url) else {
            throw call.invalid(
                position,
                "'\(url.prefix(200))' is not a resource URL: use /ff/resources/Collection/…, /Collection/… or this app's http(s) address"
            )
        }
        // Decoded as a request path would be; text that is not valid percent-encoding stays as written.
        var path = rest.contains("%") ? rest.removingPercentEncoding ?? rest : rest
        if !path.contains("("), path.hasSuffix("/") { path.removeLast() }
        let slash = path.firstIndex(of: "/")
        let name = String(path[..<(slash ?? path.endIndex)])
        guard ObjectService.isValidCollection(name) else { throw RoostError.invalidCollection(name) }
        collection = name
        let remainder = slash.map { String(path[path.index(after: $0)...]) } ?? ""
        if remainder.isEmpty {
            target = .collection
            picksRandom = false
        } else if remainder.hasPrefix("(") {
            target = .query(remainder)
            let query = QueryTraversal.split(remainder)?.query ?? remainder
            picksRandom = (try? QueryPlan(QueryParser.parse(query)))?.pickRandom ?? false
        } else if !remainder.contains("/") {
            // A malformed guid names no object (null), as `GET /C/<it>` is 404; never a query.
            target = .object(guid: remainder)
            picksRandom = false
        } else {
            throw call.invalid(
                position,
                "'\(url.prefix(200))' names a member of an object; scripts read objects, collections and queries only"
            )
        }
    }

    /// The object `guid` (already checked) in `collection`.
    init(collection: String, guid: String) {
        self.collection = collection
        target = .object(guid: guid)
        picksRandom = false
    }

    /// What follows `/ff/resources/` (or the leading `/` of a short URL); nil for other URLs.
    static func resourcePath(_ url: String) -> String? {
        let marker = "/ff/resources/"
        if url.hasPrefix("http://") || url.hasPrefix("https://") {
            let afterScheme = url[url.index(url.firstIndex(of: ":")!, offsetBy: 3)...]
            guard let slash = afterScheme.firstIndex(of: "/") else { return nil }
            let path = afterScheme[slash...]
            guard let range = Self.markerRange(in: path, marker) else { return nil }
            return String(path[range.upperBound...])
        }
        let absolute = url.hasPrefix("/") ? Substring(url) : Substring("/" + url)
        if let range = Self.markerRange(in: absolute, marker) { return String(absolute[range.upperBound...]) }
        if absolute == "/ff/resources" || absolute.hasPrefix("/ff/") { return nil }
        return String(absolute.dropFirst())
    }

    /// `/ff/resources/` at the start of the path or after one app-prefix segment, never inside a query.
    private static func markerRange(in path: Substring, _ marker: String) -> Range<Substring.Index>? {
        if path.hasPrefix(marker) {
            return path.startIndex..<path.index(path.startIndex, offsetBy: marker.count)
        }
        let afterPrefix = path.dropFirst().firstIndex(of: "/")
        guard let afterPrefix, !path[path.startIndex..<afterPrefix].contains("("),
            path[afterPrefix...].hasPrefix(marker)
        else { return nil }
        return afterPrefix..<path.index(afterPrefix, offsetBy: marker.count)
    }

    /// The collection and guid an object names by its `ffUrl`, else by `clazz` and `guid`.
    static func objectAddress(of object: JSONObject, call: ScriptCall, position: Int) throws -> (
        String, String
    ) {
        if let ffUrl = object["ffUrl"]?.stringValue {
            let address = try ScriptAddress(ffUrl, call: call, position: position, maxLength: 8192)
            guard case .object(let guid) = address.target else {
                throw call.invalid(position, "has an ffUrl '\(ffUrl.prefix(200))' that names no object")
            }
            return (address.collection, guid)
        }
        guard let clazz = object["clazz"]?.stringValue, let guid = object["guid"]?.stringValue else {
            throw call.invalid(position, "needs an ffUrl, or a clazz and a guid, to name the object")
        }
        guard ObjectService.isValidCollection(clazz) else { throw RoostError.invalidCollection(clazz) }
        guard ObjectService.isValidGuid(guid) else { throw RoostError.invalidGuid(guid) }
        return (clazz, guid)
    }
}
