import CSodium
import RoostJSON

/// SHA-256 computed as bytes arrive, for uploads streamed to disk.
public final class StreamingDigest {
    private var state = crypto_hash_sha256_state()

    public init() {
        Sodium.ensureReady()
        crypto_hash_sha256_init(&state)
    }

    /// Adds the next bytes.
    public func update(_ bytes: ArraySlice<UInt8>) {
        bytes.withUnsafeBufferPointer { buffer in
            _ = crypto_hash_sha256_update(&state, buffer.baseAddress, UInt64(buffer.count))
        }
    }

    /// The digest of everything added.
    public func finish() -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: Int(crypto_hash_sha256_bytes()))
        crypto_hash_sha256_final(&state, &digest)
        return digest
    }
}

/// What Roost knows about a blob's bytes: their type, for serving them safely.
public enum BlobContent {
    /// Types a browser would run or render as a page: served as attachments so that a blob
    /// can never act as a page of the API's origin.
    static let activeTypes: Set<String> = [
        "text/html", "application/xhtml+xml", "image/svg+xml", "text/xml", "application/xml",
        "text/javascript", "application/javascript", "application/ecmascript", "text/ecmascript",
        "application/x-shockwave-flash", "application/pdf", "text/xsl", "multipart/x-mixed-replace",
    ]

    /// Whether a browser would treat the type as active content.
    public static func isActive(_ contentType: String) -> Bool {
        let essence = essence(of: contentType)
        return activeTypes.contains(essence) || essence.hasSuffix("+xml") || essence.contains("html")
            || essence.contains("script")
    }

    /// The type without parameters, lowercased: `text/html; charset=utf-8` → `text/html`.
    static func essence(of contentType: String) -> String {
        String(contentType.split(separator: ";").first ?? "").trimmingCharacters(in: .whitespaces)
            .lowercased()
    }

    /// The type the client sent, checked; or, when it sent none, what the first bytes say (common
    /// image formats) or `application/octet-stream`.
    public static func contentType(declared: String?, prefix: [UInt8]) throws -> String {
        if let declared, !declared.isEmpty {
            let parts = essence(of: declared).split(separator: "/")
            guard declared.utf8.count <= 255, parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty,
                declared.utf8.allSatisfy({ (0x20...0x7E).contains($0) })
            else { throw RoostError.invalidContentType }
            return declared
        }
        return sniff(prefix) ?? "application/octet-stream"
    }

    /// PNG, JPEG, GIF or WebP by their magic bytes.
    static func sniff(_ bytes: [UInt8]) -> String? {
        if bytes.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return "image/png" }
        if bytes.starts(with: [0xFF, 0xD8, 0xFF]) { return "image/jpeg" }
        if bytes.starts(with: Array("GIF87a".utf8)) || bytes.starts(with: Array("GIF89a".utf8)) {
            return "image/gif"
        }
        if bytes.count >= 12, bytes.starts(with: Array("RIFF".utf8)),
            Array(bytes[8..<12]) == Array("WEBP".utf8)
        {
            return "image/webp"
        }
        return nil
    }
}

/// A blob member's value in its object: `{"blob": {contentType, size, sha256, url}}`.
public struct BlobDescriptor: Sendable, Equatable {
    public let contentType: String
    public let size: Int
    public let sha256: String
    public let url: String

    var json: JSONValue {
        .object(
            JSONObject(uniqueMembers: [
                (
                    "blob",
                    .object(
                        JSONObject(uniqueMembers: [
                            ("contentType", .string(contentType)), ("size", .integer(Int64(size))),
                            ("sha256", .string(sha256)), ("url", .string(url)),
                        ]))
                )
            ]))
    }

    /// Reads a member's value as a blob descriptor; nil when it is not one.
    init?(_ value: JSONValue?) {
        guard case .object(let outer)? = value, outer.members.count == 1,
            case .object(let blob)? = outer["blob"],
            let sha256 = blob["sha256"]?.stringValue
        else { return nil }
        self.sha256 = sha256
        contentType = blob["contentType"]?.stringValue ?? "application/octet-stream"
        size = Int(blob["size"]?.integerValue ?? 0)
        url = blob["url"]?.stringValue ?? ""
    }

    init(contentType: String, size: Int, sha256: String, url: String) {
        self.contentType = contentType
        self.size = size
        self.sha256 = sha256
        self.url = url
    }

    /// Whether a value looks like a blob member, which only the blob endpoints may write.
    static func isDescriptor(_ value: JSONValue?) -> Bool {
        guard case .object(let outer)? = value, case .object(let blob)? = outer["blob"] else { return false }
        return blob["sha256"] != nil
    }
}

extension RoostError {
    static let invalidContentType = RoostError(
        status: 400, code: .invalidContentType,
        message:
            "The Content-Type is not a media type such as image/png (type/subtype, at most 255 characters).")
}
