import Foundation

/// What a mail server said about one message.
public enum MailOutcome: Sendable, Equatable {
    case delivered
    /// Try again later: no connection, a timeout, a 4xx answer.
    case retry(reason: String)
    /// Refused for good (a 5xx answer): recorded, not retried.
    case rejected(reason: String)
}

/// Speaks SMTP (or stands in for it in tests). Implementations own their connections and are
/// safe to call concurrently; `send` never throws: every failure is an outcome.
public protocol MailSender: Sendable {
    /// Sends `message` (a whole RFC 5322 message, CRLF line ends) from `from` to `recipient`.
    func send(from: String, to recipient: String, message: String) async -> MailOutcome
    /// Ends the sends in progress and refuses new ones (as `.retry`).
    func shutdown() async
}

/// Builds RFC 5322 messages: UTF-8 text and HTML alternatives in base64, an encoded subject.
public struct MailComposer: Sendable {
    /// The envelope sender and `From:` address.
    public var from: String
    /// Shown as the sender's name (`"Roost" <noreply@example.com>`).
    public var fromName: String

    public init(from: String, fromName: String) {
        self.from = from
        self.fromName = fromName
    }

    /// A whole message; `to` and `subject` must hold no line break (``MailAddress/validate(_:)``).
    /// Without `html`, plain text alone.
    public func compose(
        to: String, subject: String, text: String, html: String?, id: String, date: Date
    ) -> String {
        let boundary = "roost-\(id)"
        let domain = from.split(separator: "@").last.map(String.init) ?? "localhost"
        var lines = [
            "From: \(Self.displayName(fromName)) <\(from)>",
            "To: <\(to)>",
            "Subject: \(Self.encodedWord(subject))",
            "Date: \(Self.date(date))",
            "Message-ID: <\(id)@\(domain)>",
            "MIME-Version: 1.0",
            "Auto-Submitted: auto-generated",
            "Content-Type: multipart/alternative; boundary=\"\(boundary)\"",
            "",
        ]
        guard let html else {
            lines.removeLast(2)
            lines += ["Content-Type: text/plain; charset=utf-8", "Content-Transfer-Encoding: base64", ""]
            lines += Self.base64Lines(text)
            lines.append("")
            return lines.joined(separator: "\r\n")
        }
        for (type, body) in [("text/plain", text), ("text/html", html)] {
            lines += [
                "--\(boundary)", "Content-Type: \(type); charset=utf-8", "Content-Transfer-Encoding: base64",
                "",
            ]
            lines += Self.base64Lines(body)
        }
        lines += ["--\(boundary)--", ""]
        return lines.joined(separator: "\r\n")
    }

    /// A name before an address: plain when it is letters, digits, spaces and a few safe marks,
    /// else RFC 2047, so no quote, `<`, comma or colon in a name can add or change an address.
    static func displayName(_ name: String) -> String {
        let plain = name.unicodeScalars.allSatisfy {
            ($0.value >= 48 && $0.value <= 57) || ($0.value >= 65 && $0.value <= 90)
                || ($0.value >= 97 && $0.value <= 122) || " !#$%&'*+-/^_`{|}~".unicodeScalars.contains($0)
        }
        return plain && !name.isEmpty ? name : "=?utf-8?B?" + Data(name.utf8).base64EncodedString() + "?="
    }

    /// RFC 2047 when the text is not plain ASCII.
    static func encodedWord(_ text: String) -> String {
        let plain = text.unicodeScalars.allSatisfy {
            $0.value >= 32 && $0.value < 127 && $0 != "=" && $0 != "?"
        }
        if plain { return text }
        return "=?utf-8?B?" + Data(text.utf8).base64EncodedString() + "?="
    }

    static func base64Lines(_ text: String) -> [String] {
        let encoded = Data(text.utf8).base64EncodedString()
        var lines: [String] = []
        var rest = Substring(encoded)
        while !rest.isEmpty {
            lines.append(String(rest.prefix(76)))
            rest = rest.dropFirst(76)
        }
        return lines
    }

    static func date(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss '+0000'"
        return formatter.string(from: date)
    }

    /// Escapes text for HTML.
    public static func html(_ text: String) -> String {
        var escaped = ""
        for character in text {
            switch character {
            case "&": escaped += "&amp;"
            case "<": escaped += "&lt;"
            case ">": escaped += "&gt;"
            case "\"": escaped += "&quot;"
            case "'": escaped += "&#39;"
            default: escaped.append(character)
            }
        }
        return escaped
    }
}

/// E-mail addresses as Roost accepts them for mail: what registration accepts, and nothing that
/// could break out of an SMTP command or a header.
public enum MailAddress {
    public static let maximumBytes = 254

    /// The address NFC-normalised, or nil when it is not one.
    public static func validate(_ address: String) -> String? {
        let normalized = address.precomposedStringWithCanonicalMapping
        guard normalized.utf8.count <= maximumBytes,
            !normalized.unicodeScalars.contains(where: {
                $0.value < 33 || $0.value == 127 || $0 == "<" || $0 == ">" || $0 == "," || $0 == ";"
            }),
            let at = normalized.lastIndex(of: "@"), at != normalized.startIndex,
            normalized[normalized.index(after: at)...].contains(".")
        else { return nil }
        return normalized
    }
}
