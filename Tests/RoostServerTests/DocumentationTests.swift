import Foundation
import RoostTestSupport
import Testing

/// The docs cannot drift: their links resolve, their module table names every module, and their
/// API examples run, pasted in order as a newcomer would, against the real binary.
@Suite("The docs")
struct DocumentationTests {
    /// Every Markdown file a reader meets: the README, docs/, the SDK's DocC catalog, the changelog.
    static func markdownFiles() throws -> [String] {
        let files = FileManager.default
        var paths = ["README.md", "CHANGELOG.md"]
        for folder in ["docs", "Sources/RoostClient/RoostClient.docc"] {
            let names = try files.contentsOfDirectory(
                atPath: DocumentationBlocks.root.appendingPathComponent(folder).path)
            paths += names.filter { $0.hasSuffix(".md") }.sorted().map { folder + "/" + $0 }
        }
        return paths
    }

    @Test("every relative link in the docs names a file that exists and, after #, one of its headings")
    func linksResolve() throws {
        var broken: [String] = []
        for file in try Self.markdownFiles() {
            let text = try String(
                contentsOf: DocumentationBlocks.root.appendingPathComponent(file), encoding: .utf8)
            for target in DocumentationBlocks.links(ofMarkdown: text) {
                if target.contains("://") || target.hasPrefix("mailto:") || target.hasPrefix("doc:") {
                    continue
                }
                let parts = target.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false)
                let folder = (file as NSString).deletingLastPathComponent
                let path =
                    parts[0].isEmpty
                    ? file
                    : ((folder as NSString).appendingPathComponent(String(parts[0])) as NSString)
                        .standardizingPath
                let url = DocumentationBlocks.root.appendingPathComponent(path)
                guard FileManager.default.fileExists(atPath: url.path) else {
                    broken.append("\(file): \(target) (no file \(path))")
                    continue
                }
                guard parts.count == 2 else { continue }
                let headings = try DocumentationBlocks.headingAnchors(
                    ofMarkdown: String(contentsOf: url, encoding: .utf8))
                if !headings.contains(String(parts[1])) {
                    broken.append("\(file): \(target) (no such heading)")
                }
            }
        }
        #expect(broken == [])
    }

    @Test("the module table of docs/internals.md names every folder under Sources, and nothing else")
    func moduleTableIsComplete() throws {
        let text = try String(
            contentsOf: DocumentationBlocks.root.appendingPathComponent("docs/internals.md"), encoding: .utf8)
        var named = Set<String>()
        for line in text.split(separator: "\n") where line.hasPrefix("| `") {
            let firstCell = line.dropFirst(2).prefix { $0 != "|" }
            for name in firstCell.split(separator: ",") {
                named.insert(name.trimmingCharacters(in: .whitespaces).trimmingCharacters(in: ["`", "/"]))
            }
        }
        let modules = try FileManager.default.contentsOfDirectory(
            atPath: DocumentationBlocks.root.appendingPathComponent("Sources").path)
        #expect(named.subtracting(["Examples"]) == Set(modules))
    }

    @Test(
        "the API examples run, in order, against the real binary",
        .enabled(if: TestBackend.isSQLite, "the examples run once, on the default backend"),
        arguments: ["README.md", "docs/api.md", "docs/accounts.md"])
    func examplesRun(file: String) async throws {
        // The blocks that talk to a server: those with a curl in them. The others set up machines
        // (systemd, TLS keys, the CLI as root) and are covered by their own tests.
        let script = try DocumentationBlocks.all(in: file)
            .filter { $0.language == "sh" && $0.text.contains("curl ") }
            .map(\.text).joined(separator: "\n")
        #expect(!script.isEmpty)
        let server = try RoostProcess(dataDirectory: TestServer.makeTemporaryDirectory())
        let folder = TestServer.makeTemporaryDirectory()
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        // As pasted, except that the server is the test's and any answer of 400 or more stops the
        // script: an example that fails is a doc to fix.
        let prologue = """
            set -euo pipefail
            cd '\(folder)'
            curl() { command curl --fail-with-body --show-error "$@"; }

            """
        let result = try await runProgram(
            "/bin/bash",
            [
                "-c",
                prologue
                    + script.replacingOccurrences(of: "127.0.0.1:8080", with: "127.0.0.1:\(server.port)"),
            ])
        #expect(result.status == 0, "\(file):\n\(result.output)\n\(result.errorOutput)")
        #expect(try await server.stop(signal: SIGTERM) == 0)
    }
}
