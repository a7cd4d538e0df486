import Foundation
import RoostCore
import RoostHTTP

/// Serves a web app's files from one folder (`--public-dir`), on the API's origin, as FatFractal
/// hosted its apps: `GET`/`HEAD` of any path outside the API, `index.html` for a folder, content
/// types by extension, ETags and single ranges, and the bytes sent with `sendfile` like blobs.
///
/// Never a directory listing, never a dot file, never a path outside the folder (`..`, encoded
/// slashes, NUL, and symbolic links that lead out or to a dot file are all 404).
public struct StaticHosting: Sendable {
    /// The folder, resolved (symbolic links followed), ending without '/'.
    let root: String

    init?(directory: String?) {
        guard let directory, let resolved = Self.resolved(directory) else { return nil }
        root = resolved
    }

    /// Whether `path` is a folder that can be served.
    public static func isUsableFolder(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR && access(path, R_OK | X_OK) == 0
    }

    /// Whether a path belongs to the API (or the dashboard, `/_/`) rather than to the web app.
    static func isAPIPath(_ path: Substring) -> Bool {
        path == "/ff" || path.hasPrefix("/ff/") || path == "/health" || path == "/metrics"
            || path == "/openapi.json" || DashboardHosting.isDashboardPath(path)
    }

    /// The answer for `request`'s path, or nil when it is not a static file's request. `prefix`
    /// is the app prefix the client's path had (`/wouldya`), which a folder's redirect keeps.
    func respond(to request: Request, prefix: String = "", asked: Substring? = nil) -> Response? {
        guard request.method == .get || request.method == .head, !Self.isAPIPath(request.path) else {
            return nil
        }
        guard let relative = Self.safeRelativePath(request.path) else { return Self.notFound }
        var path = relative.isEmpty ? root : root + "/" + relative
        var info = stat()
        guard stat(path, &info) == 0 else { return Self.notFound }
        if (info.st_mode & S_IFMT) == S_IFDIR {
            // `/wouldya` is the app's folder as much as `/Scripts` is one.
            guard request.path.hasSuffix("/"), (asked ?? request.path).hasSuffix("/") else {
                var redirect = Response(status: 301)
                redirect.headers.set(
                    "Location",
                    (request.path == "/" ? prefix : prefix + request.path) + "/"
                        + (request.query.map { "?" + $0 } ?? ""))
                return redirect
            }
            path += "/index.html"
            guard stat(path, &info) == 0 else { return Self.notFound }
        }
        // Symbolic links may not lead outside the folder, nor to a dot file or into a dot folder
        // inside it (`env.txt → .env`, `gitdir/ → .git/`).
        guard (info.st_mode & S_IFMT) == S_IFREG, let real = Self.resolved(path), real.hasPrefix(root + "/"),
            !real.dropFirst(root.count + 1).split(separator: "/").contains(where: { $0.hasPrefix(".") })
        else { return Self.notFound }
        let descriptor = open(real, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return Self.notFound }
        return Self.fileResponse(
            descriptor: descriptor, size: Int(info.st_size),
            tag: "W/\"\(info.st_size)-\(info.st_mtim.tv_sec)-\(info.st_mtim.tv_nsec)\"",
            contentType: Self.contentType(of: real), request: request)
    }

    /// A file's bytes with its tag, honouring `If-None-Match` and one `Range`; takes `descriptor`.
    static func fileResponse(descriptor: Int32, size: Int, tag: String, contentType: String, request: Request)
        -> Response
    {
        var headers = HTTPHeaders()
        headers.set("ETag", tag)
        headers.set("Cache-Control", "no-cache")
        headers.set("Accept-Ranges", "bytes")
        headers.set("X-Content-Type-Options", "nosniff")
        if let tags = request.headers["If-None-Match"],
            tags.split(separator: ",").contains(where: { $0.trimmingCharacters(in: .whitespaces) == tag })
        {
            close(descriptor)
            return Response(status: 304, headers: headers)
        }
        headers.set("Content-Type", contentType)
        var status = 200
        var range = 0..<size
        if let header = request.headers["Range"] {
            switch ByteRange(header: header, size: size) {
            case .whole: break
            case .part(let part):
                status = 206
                range = part
                headers.set("Content-Range", "bytes \(part.lowerBound)-\(part.upperBound - 1)/\(size)")
            case .unsatisfiable:
                close(descriptor)
                return ErrorBoundary.render(.rangeNotSatisfiable(size: size, of: "file"))
            }
        }
        var response = Response(status: status, headers: headers)
        if range.isEmpty {
            close(descriptor)
        } else {
            response.file = ResponseFile(
                descriptor: descriptor, offset: range.lowerBound, length: range.count)
        }
        response.route = "static"
        return response
    }

    static let notFound: Response = {
        var response = Response.json(
            404,
            RoostError(status: 404, code: .notFound, message: "There is no file at this path.").jsonBody)
        response.route = "static"
        return response
    }()

    /// The decoded path without its leading '/', or nil when any segment is unsafe.
    static func safeRelativePath(_ path: Substring) -> String? {
        guard let decoded = PercentEncoding.decode(path), !decoded.contains("\0"), !decoded.contains("\\")
        else {
            return nil
        }
        let segments = decoded.split(separator: "/", omittingEmptySubsequences: false).dropFirst()
        var kept: [Substring] = []
        for (index, segment) in segments.enumerated() {
            if segment.isEmpty {
                // Only a final '/' (a folder) may leave a segment empty.
                if index == segments.count - 1 { continue }
                return nil
            }
            if segment.hasPrefix(".") { return nil }
            kept.append(segment)
        }
        return kept.joined(separator: "/")
    }

    static func resolved(_ path: String) -> String? {
        guard let pointer = realpath(path, nil) else { return nil }
        defer { free(pointer) }
        return String(cString: pointer)
    }

    /// The content type of a web app's file, by its extension.
    static func contentType(of path: String) -> String {
        let name = path.split(separator: "/").last ?? ""
        let ext =
            name.split(separator: ".").count > 1 ? String(name.split(separator: ".").last!).lowercased() : ""
        return contentTypes[ext] ?? "application/octet-stream"
    }

    static let contentTypes: [String: String] = [
        "html": "text/html; charset=utf-8", "htm": "text/html; charset=utf-8",
        "js": "text/javascript; charset=utf-8", "mjs": "text/javascript; charset=utf-8",
        "css": "text/css; charset=utf-8", "json": "application/json; charset=utf-8",
        "txt": "text/plain; charset=utf-8", "xml": "application/xml", "svg": "image/svg+xml",
        "png": "image/png", "jpg": "image/jpeg", "jpeg": "image/jpeg", "gif": "image/gif",
        "webp": "image/webp", "ico": "image/x-icon", "woff": "font/woff", "woff2": "font/woff2",
        "ttf": "font/ttf", "wasm": "application/wasm", "map": "application/json; charset=utf-8",
        "webmanifest": "application/manifest+json", "pdf": "application/pdf", "mp4": "video/mp4",
        "mp3": "audio/mpeg", "zip": "application/zip",
    ]
}
