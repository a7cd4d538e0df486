import Foundation
import RoostCore
import RoostHTTP
import RoostStore

/// `/ff/resources/{Collection}/{guid}/{member}` for blobs: uploads streamed to disk, downloads
/// sent with `sendfile`, single ranges, and headers that keep browsers from running the bytes.
struct BlobRoutes: Sendable {
    let service: BlobService

    /// Whether a request head is a blob upload, whose body streams to disk.
    static func isUpload(_ head: RequestHead) -> Bool {
        guard head.method == "PUT" else { return false }
        let path = head.target.split(separator: "?", maxSplits: 1).first ?? ""
        let parts = path.split(separator: "/", omittingEmptySubsequences: false)
        return parts.count == 6 && parts[1] == "ff" && parts[2] == "resources" && !parts[4].hasPrefix("(")
            && parts[5] != "ffACL" && !parts[5].isEmpty
    }

    func upload(_ request: Request, _ principal: Principal?) async throws -> Response {
        guard let body = request.streamedBody else { throw RoostError.internalError }
        let object = try await service.put(
            in: request.parameters["collection"]!, guid: request.parameters["guid"]!,
            member: request.parameters["member"]!,
            upload: BlobUpload(path: body.path, size: body.size, digest: body.digest, prefix: body.prefix),
            contentType: request.headers["Content-Type"], ifMatch: request.headers["If-Match"],
            caller: principal)
        return ObjectRoutes.objectResponse(object, status: 200)
    }

    func download(_ request: Request, _ principal: Principal?) async throws -> Response {
        let blob = try await service.blob(
            in: request.parameters["collection"]!, guid: request.parameters["guid"]!,
            member: request.parameters["member"]!, caller: principal)
        var headers = HTTPHeaders()
        let tag = "\"\(blob.descriptor.sha256)\""
        headers.set("ETag", tag)
        headers.set("Cache-Control", "private")
        headers.set("Accept-Ranges", "bytes")
        headers.set("X-Content-Type-Options", "nosniff")
        if let tags = request.headers["If-None-Match"],
            tags.split(separator: ",").contains(where: {
                $0.trimmingCharacters(in: .whitespaces) == tag || $0 == "*"
            })
        {
            close(blob.file)
            return Response(status: 304, headers: headers)
        }
        headers.set("Content-Type", blob.descriptor.contentType)
        if BlobContent.isActive(blob.descriptor.contentType) {
            headers.set("Content-Disposition", "attachment")
        }
        var status = 200
        var range = 0..<blob.size
        if let header = request.headers["Range"] {
            switch Self.byteRange(header, size: blob.size) {
            case .whole: break
            case .part(let part):
                status = 206
                range = part
                headers.set("Content-Range", "bytes \(part.lowerBound)-\(part.upperBound - 1)/\(blob.size)")
            case .unsatisfiable:
                close(blob.file)
                headers.set("Content-Range", "bytes */\(blob.size)")
                let error = RoostError(
                    status: 416, code: "range_not_satisfiable",
                    message: "The range lies outside the blob's \(blob.size) bytes.")
                var response = Response.json(416, error.jsonBody, headers: headers)
                response.headers.remove("Content-Disposition")
                return response
            }
        }
        var response = Response(status: status, headers: headers)
        if range.isEmpty {
            close(blob.file)
        } else {
            response.file = ResponseFile(descriptor: blob.file, offset: range.lowerBound, length: range.count)
        }
        return response
    }

    func delete(_ request: Request, _ principal: Principal?) async throws -> Response {
        _ = try await service.delete(
            in: request.parameters["collection"]!, guid: request.parameters["guid"]!,
            member: request.parameters["member"]!, ifMatch: request.headers["If-Match"], caller: principal)
        return Response(status: 204)
    }

    enum ByteRange: Equatable {
        case whole
        case part(Range<Int>)
        case unsatisfiable
    }

    /// One `bytes=` range (RFC 9110); several ranges, or another unit, get the whole blob.
    static func byteRange(_ header: String, size: Int) -> ByteRange {
        let text = header.trimmingCharacters(in: .whitespaces)
        guard text.lowercased().hasPrefix("bytes="), !text.contains(",") else { return .whole }
        let spec = text.dropFirst(6).trimmingCharacters(in: .whitespaces)
        let bounds = spec.split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
        guard bounds.count == 2 else { return .whole }
        if bounds[0].isEmpty {
            guard let suffix = Int(bounds[1]), suffix >= 0 else { return .whole }
            guard suffix > 0, size > 0 else { return .unsatisfiable }
            return .part(max(0, size - suffix)..<size)
        }
        guard let first = Int(bounds[0]), first >= 0 else { return .whole }
        guard first < size else { return .unsatisfiable }
        if bounds[1].isEmpty { return .part(first..<size) }
        guard let last = Int(bounds[1]), last >= first else { return .whole }
        return .part(first..<min(last + 1, size))
    }
}

/// Receives an upload into a temporary file of the blob storage, hashing it on the way.
// Not Sendable: a connection uses its sink on its own loop thread only.
final class BlobUploadSink: RequestBodySink {
    private let path: String
    private var descriptor: Int32
    private let digest = StreamingDigest()
    private var size = 0
    private var prefix: [UInt8] = []

    init(storage: any BlobStorage) throws {
        (path, descriptor) = try storage.makeTemporaryFile()
    }

    func write(_ bytes: ArraySlice<UInt8>) throws {
        if prefix.count < 16 { prefix += bytes.prefix(16 - prefix.count) }
        digest.update(bytes)
        size += bytes.count
        try bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = Foundation.write(
                    descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    throw StoreError.io("could not write an upload: \(String(cString: strerror(errno)))")
                }
                offset += written
            }
        }
    }

    func finish() throws -> StreamedBody {
        close(descriptor)
        descriptor = -1
        return StreamedBody(path: path, size: size, digest: digest.finish(), prefix: prefix)
    }

    func discard() {
        if descriptor >= 0 { close(descriptor) }
        descriptor = -1
        unlink(path)
    }
}
