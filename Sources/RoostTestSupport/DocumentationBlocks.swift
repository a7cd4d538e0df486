import Foundation

/// Reads the fenced code blocks of the project's Markdown documentation, so tests run what the docs
/// show and the docs cannot drift from what works.
public enum DocumentationBlocks {
    /// The checkout's root folder (this file is Sources/RoostTestSupport/DocumentationBlocks.swift).
    public static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    public struct Block: Sendable, Equatable {
        /// The info string after the opening fence, e.g. `sh` or `json`.
        public let language: String
        public let text: String
        /// 1-based line of the opening fence, for messages.
        public let line: Int
    }

    public enum Failure: Error, CustomStringConvertible {
        case missingHeading(String, file: String)
        case missingBlock(String, heading: String, file: String)

        public var description: String {
            switch self {
            case .missingHeading(let heading, let file): "\(file) has no heading \"\(heading)\""
            case .missingBlock(let language, let heading, let file):
                "\(file) has no ```\(language) block after \"\(heading)\""
            }
        }
    }

    /// Every fenced block of a file (a path relative to the root), in order.
    public static func all(in file: String) throws -> [Block] {
        let text = try String(contentsOf: root.appendingPathComponent(file), encoding: .utf8)
        return blocks(ofMarkdown: text)
    }

    /// The first block of `language` after the heading whose text is `heading` (at any level).
    public static func first(_ language: String, after heading: String, in file: String) throws -> String {
        let text = try String(contentsOf: root.appendingPathComponent(file), encoding: .utf8)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        guard
            let headingLine = lines.firstIndex(where: {
                $0.hasPrefix("#")
                    && $0.drop(while: { $0 == "#" }).trimmingCharacters(in: .whitespaces) == heading
            })
        else { throw Failure.missingHeading(heading, file: file) }
        guard
            let block = blocks(ofMarkdown: text).first(where: {
                $0.language == language && $0.line > headingLine
            })
        else { throw Failure.missingBlock(language, heading: heading, file: file) }
        return block.text
    }

    /// The targets of the inline links `[text](target)` outside code blocks.
    public static func links(ofMarkdown text: String) -> [String] {
        proseLines(ofMarkdown: text).flatMap { line in
            // Not inside `code spans`, where brackets are code.
            line.replacing(/`[^`]*`/, with: "").matches(of: /\]\(([^)\s]+)\)/).map { String($0.output.1) }
        }
    }

    /// The anchors GitHub gives the headings: lower case, punctuation dropped, spaces as hyphens.
    public static func headingAnchors(ofMarkdown text: String) -> Set<String> {
        var anchors = Set<String>()
        for line in proseLines(ofMarkdown: text) where line.hasPrefix("#") {
            let title = line.drop(while: { $0 == "#" }).trimmingCharacters(in: .whitespaces).lowercased()
            let kept = title.filter { $0.isLetter || $0.isNumber || $0 == " " || $0 == "-" || $0 == "_" }
            anchors.insert(kept.replacingOccurrences(of: " ", with: "-"))
        }
        return anchors
    }

    private static func proseLines(ofMarkdown text: String) -> [Substring] {
        var inCode = false
        return text.split(separator: "\n", omittingEmptySubsequences: false).filter { line in
            if line.hasPrefix("```") {
                inCode.toggle()
                return false
            }
            return !inCode
        }
    }

    static func blocks(ofMarkdown text: String) -> [Block] {
        var result: [Block] = []
        var open: (language: String, line: Int, lines: [Substring])?
        for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            if line.hasPrefix("```") {
                if let block = open {
                    result.append(
                        Block(
                            language: block.language, text: block.lines.map { $0 + "\n" }.joined(),
                            line: block.line))
                    open = nil
                } else {
                    open = (String(line.dropFirst(3)).trimmingCharacters(in: .whitespaces), index + 1, [])
                }
            } else if open != nil {
                open?.lines.append(line)
            }
        }
        return result
    }
}
