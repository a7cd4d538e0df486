/// The dashboard's page and files, as bytes with their content type and ETag, built once from
/// the Swift strings that hold them (no build step, nothing fetched at run time).
struct DashboardAssets: Sendable {
    struct Asset: Sendable {
        let contentType: String
        let bytes: [UInt8]
        /// A strong tag from the bytes: a new binary with changed files gets new tags.
        let tag: String

        init(_ contentType: String, _ text: String) {
            self.contentType = contentType
            bytes = Array(text.utf8)
            tag = "\"" + DashboardAssets.fingerprint(bytes) + "\""
        }
    }

    let page: Asset
    /// By name under `/_/assets/`.
    let files: [String: Asset]

    static let standard = DashboardAssets(
        page: Asset("text/html; charset=utf-8", DashboardPage.html),
        files: [
            "dashboard.css": Asset("text/css; charset=utf-8", DashboardPage.css),
            "api.js": Asset("text/javascript; charset=utf-8", DashboardScripts.api),
            "ui.js": Asset("text/javascript; charset=utf-8", DashboardScripts.ui),
            "data.js": Asset("text/javascript; charset=utf-8", DashboardScripts.data),
            "users.js": Asset("text/javascript; charset=utf-8", DashboardScripts.users),
            "object.js": Asset("text/javascript; charset=utf-8", DashboardScripts.object),
            "app.js": Asset("text/javascript; charset=utf-8", DashboardScripts.app),
        ])

    /// The file at `path` (under `/_/`): an asset by name, nil for an unknown one or any other
    /// path that names a file (a dot in its last segment); otherwise the page.
    func asset(at path: Substring) -> Asset? {
        let rest = path.dropFirst(3)  // "/_/"
        if rest.hasPrefix("assets/") { return files[String(rest.dropFirst("assets/".count))] }
        if let last = rest.split(separator: "/").last, last.contains(".") { return nil }
        return page
    }

    /// 64-bit FNV-1a, in hex: enough to tell versions of a file apart (not a secret).
    static func fingerprint(_ bytes: [UInt8]) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        let hex = String(hash, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }
}
