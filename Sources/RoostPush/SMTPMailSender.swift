import CCurl
import RoostCore

/// Where and how mail leaves: an SMTP server by URL (`smtp://host:587` with STARTTLS,
/// `smtps://host:465` with implicit TLS) and its credentials.
public struct SMTPConfiguration: Sendable {
    /// Whether `smtp://` upgrades with STARTTLS.
    public enum StartTLS: String, Sendable, CaseIterable {
        /// Refuse to send without it (the default: credentials and links never travel in clear).
        case required
        /// Use it when the server offers it.
        case optional
        /// Never (a relay on the same machine).
        case off
    }

    public var url: String
    public var username: String?
    /// Read from a file or the environment by `roost serve`; never printed.
    public var password: String?
    public var startTLS = StartTLS.required
    /// PEM certificates to trust instead of the system's.
    public var caFile: String?
    /// One message's bound, connecting included.
    public var timeoutMilliseconds = 30_000
    /// Sends at once (each a thread blocked on its connection).
    public var connections = 2

    public init(url: String) {
        self.url = url
    }

    /// Why the configuration cannot work, or nil.
    public var problem: String? {
        let lowered = url.lowercased()
        guard lowered.hasPrefix("smtp://") || lowered.hasPrefix("smtps://") else {
            return "--smtp-url must start with smtp:// or smtps://"
        }
        if url.unicodeScalars.contains(where: { $0.value < 33 }) {
            return "--smtp-url must not contain spaces"
        }
        if (username == nil) != (password == nil) {
            return
                "--smtp-user needs a password (--smtp-password-file or ROOST_SMTP_PASSWORD), and the other way round"
        }
        return nil
    }
}

/// Sends each message over its own SMTP session with libcurl (EHLO, STARTTLS or implicit TLS,
/// AUTH, MAIL FROM, RCPT TO, DATA) on a few threads of its own, so no Swift task thread blocks on
/// the network. 5xx answers are refusals; everything else (no connection, 4xx, timeouts) is
/// retried by the dispatcher.
public final class SMTPMailSender: MailSender {
    let configuration: SMTPConfiguration
    private let workers: BackgroundWorkers
    private static let globalInit: Void = { curl_global_init(roost_curl_global_default()) }()

    public init(configuration: SMTPConfiguration) {
        _ = Self.globalInit
        self.configuration = configuration
        workers = BackgroundWorkers(
            threads: max(1, configuration.connections), name: "roost-smtp", lowPriority: false)
    }

    public func send(from: String, to recipient: String, message: String) async -> MailOutcome {
        let configuration = configuration
        return await workers.run { Self.perform(configuration, from: from, to: recipient, message: message) }
    }

    public func shutdown() async {
        await workers.stop()
    }

    /// One SMTP session, blocking the calling worker thread.
    static func perform(
        _ configuration: SMTPConfiguration, from: String, to recipient: String, message: String
    )
        -> MailOutcome
    {
        guard let easy = curl_easy_init() else { return .retry(reason: "curl_easy_init failed") }
        defer { curl_easy_cleanup(easy) }
        let upload = Upload(Array(message.utf8))
        guard let recipients = curl_slist_append(nil, "<\(recipient)>") else {
            return .retry(reason: "curl_slist_append failed")
        }
        defer { curl_slist_free_all(recipients) }
        var errorBuffer = [CChar](repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
        let code: CURLcode = withExtendedLifetime(upload) {
            errorBuffer.withUnsafeMutableBufferPointer { buffer in
                roost_curl_easy_set_string(easy, CURLOPT_URL, configuration.url)
                roost_curl_easy_set_long(easy, CURLOPT_NOSIGNAL, 1)
                roost_curl_easy_set_long(easy, CURLOPT_TIMEOUT_MS, configuration.timeoutMilliseconds)
                roost_curl_easy_set_long(
                    easy, CURLOPT_CONNECTTIMEOUT_MS, min(10_000, configuration.timeoutMilliseconds))
                let tls: curl_usessl =
                    switch configuration.startTLS {
                    case .required: CURLUSESSL_ALL
                    case .optional: CURLUSESSL_TRY
                    case .off: CURLUSESSL_NONE
                    }
                roost_curl_easy_set_long(easy, CURLOPT_USE_SSL, Int(tls.rawValue))
                if let caFile = configuration.caFile {
                    roost_curl_easy_set_string(easy, CURLOPT_CAINFO, caFile)
                }
                if let username = configuration.username, let password = configuration.password {
                    roost_curl_easy_set_string(easy, CURLOPT_USERNAME, username)
                    roost_curl_easy_set_string(easy, CURLOPT_PASSWORD, password)
                }
                roost_curl_easy_set_string(easy, CURLOPT_MAIL_FROM, "<\(from)>")
                roost_curl_easy_set_pointer(easy, CURLOPT_MAIL_RCPT, UnsafeMutableRawPointer(recipients))
                roost_curl_easy_set_long(easy, CURLOPT_UPLOAD, 1)
                roost_curl_easy_set_long(easy, CURLOPT_INFILESIZE, upload.bytes.count)
                roost_curl_easy_set_callback(easy, CURLOPT_READFUNCTION, readMessage)
                roost_curl_easy_set_pointer(
                    easy, CURLOPT_READDATA, Unmanaged.passUnretained(upload).toOpaque())
                roost_curl_easy_set_pointer(easy, CURLOPT_ERRORBUFFER, buffer.baseAddress)
                return curl_easy_perform(easy)
            }
        }
        if code == CURLE_OK { return .delivered }
        var response = 0
        roost_curl_easy_get_long(easy, CURLINFO_RESPONSE_CODE, &response)
        let detail = String(
            decoding: errorBuffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let reason =
            (detail.isEmpty ? String(cString: curl_easy_strerror(code)) : detail)
            + (response > 0 ? " (SMTP \(response))" : "")
        // A refused login is the operator's to fix: the message waits for the next attempt.
        if (500...599).contains(response), code != CURLE_LOGIN_DENIED { return .rejected(reason: reason) }
        return .retry(reason: reason)
    }
}

/// The message bytes curl reads, with how far it has read. Confined to the one thread that runs
/// the transfer.
private final class Upload {
    let bytes: [UInt8]
    var offset = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }
}

private let readMessage: roost_curl_data_callback = { buffer, size, count, context in
    let upload = Unmanaged<Upload>.fromOpaque(context!).takeUnretainedValue()
    let room = size * count
    let length = min(room, upload.bytes.count - upload.offset)
    guard length > 0, let buffer else { return 0 }
    upload.bytes.withUnsafeBufferPointer { source in
        UnsafeMutableRawPointer(buffer).copyMemory(
            from: source.baseAddress! + upload.offset, byteCount: length)
    }
    upload.offset += length
    return length
}
