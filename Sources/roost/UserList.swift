import Foundation
import RoostCore
import RoostJSON
import RoostStore

/// One line of `roost users list`: what an operator needs to know of an account.
struct UserSummary {
    let userName: String
    let email: String?
    let guid: String
    let admin: Bool
    let active: Bool

    /// Every `FFUser` object, in the order the users were created, read a page at a time.
    static func all(in store: any ObjectStore) async throws -> [UserSummary] {
        var users: [UserSummary] = []
        let pageSize = ObjectService.maximumPageSize
        var start = 0
        while true {
            let page = try await store.list(
                ListRequest(collection: AccountService.userCollection, start: start, count: pageSize))
            start += page.documents.count
            for document in page.documents {
                guard case .object(let fields) = try JSONParser.parse(document) else { continue }
                users.append(
                    UserSummary(
                        userName: fields["userName"]?.stringValue ?? "",
                        email: fields["email"]?.stringValue,
                        guid: fields["guid"]?.stringValue ?? "",
                        // As access checks read them: only true makes an administrator, and only
                        // false deactivates.
                        admin: fields["admin"] == .bool(true),
                        active: fields["active"] != .bool(false)))
            }
            if page.documents.count < pageSize { return users }
        }
    }

    /// Columns padded to their widest cell, a header first.
    static func table(_ users: [UserSummary]) -> String {
        guard !users.isEmpty else { return "no users" }
        let rows =
            [["NAME", "EMAIL", "GUID", "ADMIN", "ACTIVE"]]
            + users.map {
                [$0.userName, $0.email ?? "-", $0.guid, $0.admin ? "yes" : "no", $0.active ? "yes" : "no"]
            }
        let widths = (0..<5).map { column in rows.map { $0[column].count }.max() ?? 0 }
        return rows.map { row in
            row.enumerated().map { column, cell in
                column == row.count - 1
                    ? cell : cell.padding(toLength: widths[column] + 2, withPad: " ", startingAt: 0)
            }.joined()
        }.joined(separator: "\n")
    }

    /// A JSON array of `{"userName","email","guid","admin","active"}`, email null when there is none.
    static func json(_ users: [UserSummary]) -> String {
        JSONWriter.string(
            .array(
                users.map {
                    .object(
                        JSONObject(uniqueMembers: [
                            ("userName", .string($0.userName)),
                            ("email", $0.email.map(JSONValue.string) ?? .null),
                            ("guid", .string($0.guid)), ("admin", .bool($0.admin)),
                            ("active", .bool($0.active)),
                        ]))
                }))
    }
}
