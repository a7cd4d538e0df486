import Foundation
import RoostCore
import RoostHTTP
import RoostStore
import Synchronization

/// `/ff/resources/{Collection}/{guid}/{member}` for blobs: uploads streamed to disk, downloads
/// sent with `sendfile`, single ranges, and headers that keep browsers from running the bytes.
struct BlobRoutes: Sendable {
    let service: BlobService

    func upload(_ request: Request, _ principal: Principal?, _ key: IdempotencyMark?) async throws -> Response
    {
        guard let body = request.streamedBody else {
            throw RoostError(
                status: 411, code: .lengthRequired,
                message: "Send the blob's bytes with a Content-Length (0 for an empty blob) or chunked.")
        }
        let address = try BlobAddress(request)
        let object = try await service.serving(ObjectRoutes.origin(of: request)).put(
            in: address.collection, guid: address.guid, member: address.member,
            upload: BlobUpload(path: body.path, size: body.size, digest: body.digest, prefix: body.prefix),
            contentType: request.headers["Content-Type"], ifMatch: request.headers["If-Match"],
            caller: principal, idempotency: key)
        return ObjectRoutes.objectResponse(object, status: 200)
    }

    /// Runs when an upload's head arrives: who sends it, whether they may update the object and
    /// whether it exists are decided before `100 Continue` and before a byte is written.
    func admitUpload(_ request: Request, _ principal: Principal?) async throws {
        // A resend under an `Idempotency-Key` whose first try succeeded carries an `If-Match` that
        // is stale by now, yet is owed the recorded answer: the write decides those.
        let ifMatch = request.headers["Idempotency-Key"] == nil ? request.headers["If-Match"] : nil
        let address = try BlobAddress(request)
        try await service.checkUpload(
            in: address.collection, guid: address.guid, member: address.member, ifMatch: ifMatch,
            caller: principal)
    }

    func download(_ request: Request, _ principal: Principal?) async throws -> Response {
        let address = try BlobAddress(request)
        let blob = try await service.blob(
            in: address.collection, guid: address.guid, member: address.member, caller: principal)
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
            switch ByteRange(header: header, size: blob.size) {
            case .whole: break
            case .part(let part):
                status = 206
                range = part
                headers.set("Content-Range", "bytes \(part.lowerBound)-\(part.upperBound - 1)/\(blob.size)")
            case .unsatisfiable:
                close(blob.file)
                throw RoostError.rangeNotSatisfiable(size: blob.size, of: "blob")
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

    func delete(_ request: Request, _ principal: Principal?, _ key: IdempotencyMark?) async throws -> Response
    {
        let address = try BlobAddress(request)
        _ = try await service.serving(ObjectRoutes.origin(of: request)).delete(
            in: address.collection, guid: address.guid, member: address.member,
            ifMatch: request.headers["If-Match"], caller: principal, idempotency: key)
        return Response(status: 204)
    }
}

/// Receives an upload into a temporary file of the blob storage, hashing it on the way. The
/// writes run on a queue of the sink's own, never on the event loop; past 4 MiB in flight the
/// connection stops reading until the queue is down to 1 MiB.
// @unchecked Sendable: the file state (descriptor, digest, size, prefix, failure) is used only on
// `queue`; the flow counters and the resume closure only under `flow`.
final class BlobUploadSink: RequestBodySink, @unchecked Sendable {
    private static let highWater = 4 << 20
    private static let lowWater = 1 << 20

    private struct Flow {
        var pending = 0
        var resume: (@Sendable () -> Void)?
    }

    private let queue = DispatchQueue(label: "roost-upload")
    private let flow = Mutex(Flow())
    private let path: String
    private var descriptor: Int32
    private let digest = StreamingDigest()
    private var size = 0
    private var prefix: [UInt8] = []
    private var failure: String?
    private var failedForSpace = false

    init(storage: any BlobStorage) throws {
        do {
            (path, descriptor) = try storage.makeTemporaryFile()
        } catch let error where StorageFailure.isOutOfSpace(error) {
            throw ErrorBoundary.diskFull
        }
    }

    func write(_ bytes: ArraySlice<UInt8>) -> Bool {
        let chunk = Array(bytes)
        let pending = flow.withLock { flow in
            flow.pending += chunk.count
            return flow.pending
        }
        queue.async { [self] in
            store(chunk)
            let resume: (@Sendable () -> Void)? = flow.withLock { flow in
                flow.pending -= chunk.count
                guard flow.pending <= Self.lowWater, let resume = flow.resume else { return nil }
                flow.resume = nil
                return resume
            }
            resume?()
        }
        return pending < Self.highWater
    }

    func whenReady(_ resume: @escaping @Sendable () -> Void) {
        let ready = flow.withLock { flow in
            if flow.pending <= Self.lowWater { return true }
            flow.resume = resume
            return false
        }
        if ready { resume() }
    }

    /// On `queue`: hashes and appends a chunk; the first failure stops the rest.
    private func store(_ chunk: [UInt8]) {
        guard failure == nil, descriptor >= 0 else { return }
        if prefix.count < 16 { prefix += chunk.prefix(16 - prefix.count) }
        digest.update(chunk[...])
        size += chunk.count
        chunk.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = Foundation.write(
                    descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    let code = errno
                    failure = "could not write an upload: \(String(cString: strerror(code)))"
                    failedForSpace = OutOfSpaceError.isOutOfSpace(errno: code)
                    return
                }
                offset += written
            }
        }
    }

    func finish() async throws -> StreamedBody {
        try await withCheckedThrowingContinuation { continuation in
            queue.async { [self] in
                if descriptor >= 0 { close(descriptor) }
                descriptor = -1
                if let failure {
                    unlink(path)
                    continuation.resume(
                        throwing: failedForSpace ? ErrorBoundary.diskFull : StoreError.io(failure))
                } else {
                    continuation.resume(
                        returning: StreamedBody(
                            path: path, size: size, digest: digest.finish(), prefix: prefix))
                }
            }
        }
    }

    func discard() {
        queue.async { [self] in
            if descriptor >= 0 { close(descriptor) }
            descriptor = -1
            unlink(path)
        }
    }
}

/// The collection, guid and member a blob route names.
private struct BlobAddress {
    let collection: String
    let guid: String
    let member: String

    init(_ request: Request) throws {
        collection = try request.parameters.require("collection")
        guid = try request.parameters.require("guid")
        member = try request.parameters.require("member")
    }
}

extension RoostError {
    /// 416 for a `Range` past the end, with the `Content-Range` that tells the client the size.
    static func rangeNotSatisfiable(size: Int, of what: String) -> RoostError {
        RoostError(
            status: 416, code: .rangeNotSatisfiable,
            message: "The range lies outside the \(what)'s \(size) bytes.",
            headers: [ErrorHeader(name: "Content-Range", value: "bytes */\(size)")])
    }
}
