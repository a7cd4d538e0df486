import Foundation
import RoostCore
import RoostPostgres
import RoostQuery
import RoostSQLite
import RoostStore
import Testing

/// The same seeded queries on SQLite and PostgreSQL over the same documents: the same guids in
/// the same order, with sorts, pages and totals.
@Suite("Query differential: SQLite and PostgreSQL")
struct QueryDifferentialTests {
    @Test("seeded random queries return the same guids in the same order on both backends")
    func seededQueries() async throws {
        let sqlite = try SQLiteStorage(
            directory: NSTemporaryDirectory() + "roost-differential-" + UUID().uuidString,
            collections: .builtIn)
        defer { Task { await sqlite.close() } }
        try await withPostgresStorage { postgres in
            for object in DifferentialCorpus.objects() {
                try await sqlite.objects.insert(object)
                try await postgres.objects.insert(object)
            }
            var generator = SeededGenerator(seed: DifferentialCorpus.seed ^ 0x5EED_D1FF)
            var compared = 0
            var refused = 0
            for round in 0..<DifferentialCorpus.rounds {
                let text = DifferentialCorpus.query(using: &generator, mutate: round % 3 == 2)
                guard let expression = try? QueryParser.parse(text), let plan = try? QueryPlan(expression),
                    !plan.pickRandom
                else { continue }
                var request = ListRequest(
                    collection: "Thing", filter: plan.filter,
                    sort: DifferentialCorpus.sort(using: &generator),
                    start: Int.random(in: 0..<4, using: &generator) * 5,
                    count: [5, 20, 200].randomElement(using: &generator)!,
                    includeTotal: true)
                if round % 4 == 1 { request.references = .unrestricted }
                if round % 7 == 6 { request.references = Self.restrictedReferences }
                if round % 5 == 3 {
                    request.restriction = try QueryParser.parse(
                        "(ffACL.readUsers contains_any 'u1' or createdBy eq 'u1')")
                }
                let expected: ListPage
                do {
                    expected = try await sqlite.objects.list(request)
                } catch {
                    continue  // refused by SQLite's compiler (a range on a boolean, say): not compared
                }
                let actual: ListPage
                do {
                    actual = try await postgres.objects.list(request)
                } catch let error as QueryError {
                    // Regular expressions PostgreSQL cannot run are refused; everything else must answer.
                    #expect(error.message.contains("regular expression"), "\(text): \(error)")
                    refused += 1
                    continue
                }
                let expectedGuids = expected.documents.map(guid(of:))
                let actualGuids = actual.documents.map(guid(of:))
                #expect(
                    actualGuids == expectedGuids && actual.total == expected.total,
                    "\(text) sorted \(request.sort.map { "\($0.field)\($0.descending ? " desc" : "")" }) from \(request.start): \(Self.difference(expected, actual))"
                )
                compared += 1
            }
            print("differential: \(compared) queries compared, \(refused) refused by PostgreSQL")
            #expect(compared > DifferentialCorpus.rounds / 2)
            #expect(refused < compared / 20)
        }
    }

    /// References as a signed-in caller sees them: `Other` hides Bob and keeps `n` to its owners.
    static let restrictedReferences = ReferenceAccess(
        collections: [
            "Other": .init(restriction: try! QueryParser.parse("(name ne 'Bob')"), ownerOnlyFields: ["n"])
        ],
        others: .init(restriction: nil, ownerOnlyFields: []), viewer: "u1")

    /// Where two pages part: the first documents that differ, and the totals.
    static func difference(_ expected: ListPage, _ actual: ListPage) -> String {
        let text = { (document: [UInt8]) in String(decoding: document, as: UTF8.self) }
        let position =
            zip(expected.documents, actual.documents).enumerated().first { $0.element.0 != $0.element.1 }?
            .offset
            ?? min(expected.documents.count, actual.documents.count)
        let sqlite = expected.documents.dropFirst(position).prefix(2).map(text)
        let postgres = actual.documents.dropFirst(position).prefix(2).map(text)
        return
            "at \(position) SQLite \(sqlite) of \(expected.documents.count) (total \(expected.total ?? -1)), "
            + "PostgreSQL \(postgres) of \(actual.documents.count) (total \(actual.total ?? -1))"
    }

    @Test("random(guid) and the by-guid read agree with SQLite on which objects match")
    func randomPickAndByGuid() async throws {
        let sqlite = try SQLiteStorage(
            directory: NSTemporaryDirectory() + "roost-differential-" + UUID().uuidString,
            collections: .builtIn)
        defer { Task { await sqlite.close() } }
        try await withPostgresStorage { postgres in
            let objects = DifferentialCorpus.objects()
            for object in objects {
                try await sqlite.objects.insert(object)
                try await postgres.objects.insert(object)
            }
            let guids = objects.map(\.guid) + ["missing"]
            for text in ["(n gt 1)", "(s gte 'a')", "(tags contains_any 'red')", "(b eq true)"] {
                guard let filter = try? QueryParser.parse(text) else { continue }
                let all = try await sqlite.objects.list(
                    ListRequest(collection: "Thing", filter: filter, count: 1000))
                let matching = Set(all.documents.map(guid(of:)))
                let byGuid = try await postgres.objects.objects(
                    in: "Thing", guids: guids, restriction: filter)
                #expect(
                    Set(byGuid.keys) == matching,
                    "\(text): \(byGuid.filter { !matching.contains($0.key) }.map { String(decoding: $0.value, as: UTF8.self) })"
                )
                let pick = try await postgres.objects.randomPick(
                    ListRequest(collection: "Thing", filter: filter, includeTotal: true))
                #expect(pick.total == matching.count)
                #expect(pick.documents.allSatisfy { matching.contains(guid(of: $0)) })
                #expect(pick.documents.count == (matching.isEmpty ? 0 : 1))
            }
        }
    }
}
