import Foundation
import RoostCore
import RoostJSON
import RoostStore

/// `ff.sendEmail(message)` and `ff.sendSMTPEmail(message)`, in FatFractal's shape: one object with
/// `to`, `subject`, `text` and optionally `html` and `fromName`. Each recipient's message is a row
/// in the mail outbox at the call, sent after by the dispatcher with retries.
///
/// FatFractal's scripts also pass the mail server (`host`, `port`, `auth`, `username`,
/// `password`, `from`…): Roost ignores those and sends through its own server from its own
/// address, so a script (or a caller whose input reaches one) can neither relay through another
/// host nor forge a sender.
extension FatFractalScriptAPI {
    /// Recipients of one call.
    static let maximumMailRecipients = 10
    /// Messages one script run may queue.
    static let maximumMailsPerRun = 20
    /// Bytes of a subject (one header line, encoded).
    static let maximumSubjectBytes = 500
    /// Bytes of text and HTML together.
    static let maximumMailBodyBytes = 256 * 1024
    /// What FatFractal's scripts say about their own server, ignored.
    static let ignoredMailFields: Set<String> = [
        "host", "port", "auth", "authPort", "username", "password", "from", "ssl", "tls", "secure",
    ]
    /// Fields that would change who receives the message: refused rather than dropped.
    static let refusedMailFields = ["cc", "bcc", "replyTo", "attachments"]

    func sendMail(_ call: ScriptCall) async throws -> JSONValue {
        try call.expectCount(1)
        let message = try Self.mailMessage(call)
        guard let mail = services.mail else {
            throw RoostError.scriptServiceNotConfigured(call.method, service: "an outgoing mail server")
        }
        let ignored = message.ignored.sorted()
        if !ignored.isEmpty {
            // Names only: FatFractal's scripts put their SMTP password here.
            logger.scriptLine(
                level: "info",
                "\(call.method) ignores \(ignored.joined(separator: ", ")): Roost sends through its own mail server (--smtp-url) from --mail-from",
                requestID: requestID, fields: [("script", scriptName)])
        }
        let count = message.recipients.count
        guard mailsQueued.add(count, limit: Self.maximumMailsPerRun) else {
            throw RoostError(
                status: 429, code: .tooManyMails,
                message:
                    "A script run may queue at most \(Self.maximumMailsPerRun) messages; this one would be more."
            )
        }
        let now = mail.clock.nowMilliseconds()
        let window = mail.hourly.take(count, now: now)
        guard window.taken else {
            throw RoostError(
                status: 429, code: .tooManyMails,
                message:
                    "Scripts have queued \(mail.hourly.limit) messages this hour, the server's limit; try again in \(window.retryAfter) seconds.",
                details: JSONObject(uniqueMembers: [("retryAfter", .integer(Int64(window.retryAfter)))])
            ).retrying(after: window.retryAfter)
        }
        var composer = mail.composer
        if let fromName = message.fromName { composer.fromName = fromName }
        var ids: [JSONValue] = []
        for recipient in message.recipients {
            let id = mail.guids.makeGuid()
            let text = composer.compose(
                to: recipient, subject: message.subject, text: message.text, html: message.html, id: id,
                date: Date(timeIntervalSince1970: Double(now) / 1000))
            try await mail.store.enqueue(
                OutboxMail(id: id, kind: "script", recipient: recipient, message: text), now: now)
            ids.append(.string(id))
        }
        mail.queued()
        return .object(JSONObject(uniqueMembers: [("queued", .integer(Int64(count))), ("ids", .array(ids))]))
    }

    struct MailMessage {
        var recipients: [String]
        var subject: String
        var text: String
        var html: String?
        var fromName: String?
        var ignored: Set<String>
    }

    /// The message the call describes, checked: every problem is a 400 that names it.
    static func mailMessage(_ call: ScriptCall) throws -> MailMessage {
        guard case .object(let fields) = call.arguments[0] else {
            throw call.invalid(
                0, "must be an object such as {to: 'ada@example.com', subject: 'Hello', text: 'Hi'}")
        }
        if let refused = refusedMailFields.first(where: { fields[$0] != nil }) {
            throw call.invalid(0, "has '\(refused)', which Roost does not send: name every recipient in 'to'")
        }
        let addresses: [JSONValue]
        switch fields["to"] {
        case .string(let address)?: addresses = [.string(address)]
        case .array(let items)?: addresses = items
        default: throw call.invalid(0, "needs 'to': an address or an array of addresses")
        }
        guard (1...maximumMailRecipients).contains(addresses.count) else {
            throw call.invalid(
                0,
                "names \(addresses.count) recipients in 'to'; one call sends to 1 to \(maximumMailRecipients)"
            )
        }
        var recipients: [String] = []
        for address in addresses {
            guard let text = address.stringValue, let valid = MailAddress.validate(text) else {
                throw call.invalid(0, "has a 'to' that is not an address like name@example.com")
            }
            if !recipients.contains(valid) { recipients.append(valid) }
        }
        guard let subject = fields["subject"]?.stringValue, !subject.isEmpty else {
            throw call.invalid(0, "needs a 'subject'")
        }
        guard subject.utf8.count <= maximumSubjectBytes, !subject.unicodeScalars.contains(where: isControl)
        else {
            throw call.invalid(
                0,
                "has a 'subject' over \(maximumSubjectBytes) bytes or with a line break or control character")
        }
        let text = fields["text"]?.stringValue
        let html = fields["html"]?.stringValue
        guard text != nil || html != nil else { throw call.invalid(0, "needs a 'text' (and may add 'html')") }
        guard (text?.utf8.count ?? 0) + (html?.utf8.count ?? 0) <= maximumMailBodyBytes else {
            throw call.invalid(0, "has over \(maximumMailBodyBytes / 1024) KiB of text and HTML")
        }
        var fromName: String?
        if let name = fields["fromName"] {
            guard let text = name.stringValue, !text.isEmpty, text.utf8.count <= 100,
                !text.unicodeScalars.contains(where: isControl)
            else {
                throw call.invalid(0, "has a 'fromName' that is not one line of at most 100 bytes")
            }
            fromName = text
        }
        return MailMessage(
            recipients: recipients, subject: subject,
            text: text ?? "This message is in HTML; open it in a mail program that shows HTML.", html: html,
            fromName: fromName, ignored: Set(fields.members.map(\.key)).intersection(ignoredMailFields))
    }

    private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 32 || scalar.value == 127
    }
}
