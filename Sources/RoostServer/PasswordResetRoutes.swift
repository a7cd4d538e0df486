import RoostCore
import RoostHTTP
import RoostJSON
import RoostScripts
import RoostStore

/// What `roost serve` is told about mail: the SMTP server (from which the program composing the
/// server makes ``sender``), the sender address, the dispatcher's pacing and the reset flow.
public struct MailOptions: Sendable {
    /// Delivers over SMTP; nil: mail is not configured, and routes that need it answer 503.
    public var sender: (any MailSender)?
    /// The envelope sender and `From:` (`--mail-from`).
    public var from: String?
    public var dispatch = MailDispatchOptions()
    public var reset = PasswordResetOptions()
    /// E-mail verification and change (`--email-verification`, `--email-*-url`).
    public var email = EmailAddressOptions()
    public var smtp = SMTPSettings()
    /// Messages scripts may queue per hour on this server (`--script-mails-per-hour`).
    public var scriptMailsPerHour = ScriptMail.defaultHourlyLimit

    public init() {}
}

/// `--smtp-*`: the server's URL and credentials. The password is read from a file or the
/// `ROOST_SMTP_PASSWORD` environment variable, never from a flag's value, and never logged.
public struct SMTPSettings: Sendable, Equatable {
    /// `smtp://host:587` (STARTTLS) or `smtps://host:465` (implicit TLS).
    public var url: String?
    public var username: String?
    public var passwordFile: String?
    /// `required` (default), `optional` or `off`.
    public var startTLS = "required"
    public var caFile: String?

    public init() {}
}

/// `POST /ff/password/reset` and `POST /ff/password/reset/confirm`.
struct PasswordResetRoutes: Sendable {
    let service: PasswordResetService

    /// The one answer to every well-formed reset request, whether or not the address is known.
    static let acceptedBody = Array(
        #"{"accepted":true,"message":"If an account has this address, a mail with a reset link is on its way."}"#
            .utf8)

    func register(in routes: APIRoutes) {
        let small: @Sendable (Request, RequestContext) async throws -> Void = { _, _ in
            throw RoostError.accountBodyTooLarge
        }
        routes.open.on(.post, "/ff/password/reset", admit: small) { request, _ in
            guard service.isConfigured else { throw RoostError.mailNotConfigured }
            let body = try ObjectRoutes.bodyObject(request)
            guard let value = body["email"] else { throw RoostError.missingField("email") }
            guard let email = value.stringValue else {
                throw RoostError.invalidField("email", "email must be a string.")
            }
            try await service.request(email: email, client: clientKey(forAddress: request.remoteAddress))
            return Response.json(202, Self.acceptedBody)
        }
        routes.open.on(.post, "/ff/password/reset/confirm", admit: small) { request, _ in
            let body = try ObjectRoutes.bodyObject(request)
            guard let token = body["token"] else { throw RoostError.missingField("token") }
            guard let token = token.stringValue else { throw RoostError.invalidResetToken }
            guard let password = body["password"]?.stringValue else {
                throw RoostError.missingField("password")
            }
            try await service.confirm(token: token, password: password)
            return Response.json(200, Array(#"{"reset":true}"#.utf8))
        }
    }
}

extension Application {
    /// The mail dispatcher when a sender and a sender address are configured.
    static func makeMailDispatcher(_ configuration: ServerConfiguration, storage: any Storage, logger: Logger)
        -> MailDispatcher?
    {
        guard let sender = configuration.mail.sender, let from = configuration.mail.from else { return nil }
        var options = configuration.mail.dispatch
        if configuration.databaseURL == nil { options.holder = "embedded" }
        return MailDispatcher(
            store: storage.mailStore, sender: sender, from: from, options: options,
            clock: configuration.clock,
            logger: { [logger] line in logger.error(line) })
    }

    /// The routes that send mail (password reset, e-mail verification and change); the e-mail
    /// service, which registration also uses.
    static func registerMailRoutes(
        _ configuration: ServerConfiguration, storage: any Storage, accounts: AccountService,
        authenticator: Authenticator, dispatcher: MailDispatcher?, in routes: APIRoutes
    ) -> EmailAddressService {
        PasswordResetRoutes(
            service: makePasswordReset(configuration, storage: storage, dispatcher: dispatcher)
        )
        .register(in: routes)
        let emailAddresses = makeEmailAddresses(
            configuration, storage: storage, accounts: accounts, dispatcher: dispatcher)
        EmailAddressRoutes(service: emailAddresses, authenticator: authenticator).register(in: routes)
        return emailAddresses
    }

    /// Scripts' `sendEmail`, when a mail server is configured: from the server's own address,
    /// under the app's name.
    static func makeScriptMail(
        _ configuration: ServerConfiguration, storage: any Storage, dispatcher: MailDispatcher?
    ) -> ScriptMail? {
        guard let dispatcher, let from = configuration.mail.from else { return nil }
        return ScriptMail(
            store: storage.mailStore,
            composer: MailComposer(from: from, fromName: configuration.mail.reset.appName),
            clock: configuration.clock, guids: configuration.guids,
            hourlyLimit: configuration.mail.scriptMailsPerHour, queued: { dispatcher.wake() })
    }

    /// The reset flow, which needs the dispatcher to send its mail.
    static func makePasswordReset(
        _ configuration: ServerConfiguration, storage: any Storage, dispatcher: MailDispatcher?
    ) -> PasswordResetService {
        PasswordResetService(
            store: storage.mailStore, accounts: storage.accountStore, hasher: configuration.passwordHasher,
            clock: configuration.clock, guids: configuration.guids, failures: storage.loginFailures,
            options: configuration.mail.reset,
            composer: dispatcher.flatMap { _ in
                configuration.mail.from.map {
                    MailComposer(from: $0, fromName: configuration.mail.reset.appName)
                }
            },
            queued: { dispatcher?.wake() })
    }
}
