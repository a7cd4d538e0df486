import RoostCore
import RoostHTTP
import RoostJSON
import RoostStore

/// `POST /ff/email/verify/request`, `/ff/email/verify/confirm`, `/ff/email/change` and
/// `/ff/email/change/confirm`.
struct EmailAddressRoutes: Sendable {
    let service: EmailAddressService
    let authenticator: Authenticator

    /// The one answer to every well-formed verification request, whether or not the address is
    /// an account's, or already verified.
    static let verificationAccepted = Array(
        #"{"accepted":true,"message":"If an account has this address and it is not verified yet, a mail with a confirmation link is on its way."}"#
            .utf8)
    /// The one answer to a change request, whether or not the new address is taken.
    static let changeAccepted = Array(
        #"{"accepted":true,"message":"A confirmation link is on its way to the new address; the address changes once it is opened."}"#
            .utf8)

    func register(in routes: APIRoutes) {
        let small: @Sendable (Request, RequestContext) async throws -> Void = { _, _ in
            throw RoostError.accountBodyTooLarge
        }
        routes.open.on(.post, "/ff/email/verify/request", admit: small) { request, _ in
            guard service.isConfigured else { throw RoostError.mailNotConfigured }
            let client = clientKey(forAddress: request.remoteAddress)
            if let principal = try await authenticator.principal(for: request) {
                try await service.requestVerification(for: principal, client: client)
            } else {
                let body = try ObjectRoutes.bodyObject(request)
                try await service.requestVerification(
                    email: try Self.string("email", in: body), client: client)
            }
            return Response.json(202, Self.verificationAccepted)
        }
        routes.open.on(.post, "/ff/email/verify/confirm", admit: small) { request, _ in
            let email = try await service.confirmVerification(token: try Self.token(in: request))
            return Response.json(
                200,
                JSONWriter.bytes(
                    .object(
                        JSONObject(uniqueMembers: [("verified", .bool(true)), ("email", .string(email))]))))
        }
        routes.loggedIn.on(.post, "/ff/email/change") { request, context in
            let principal = try context.user()
            let body = try ObjectRoutes.bodyObject(request)
            try await service.requestChange(
                for: principal, to: try Self.string("newEmail", in: body),
                password: try Self.string("password", in: body),
                client: clientKey(forAddress: request.remoteAddress))
            return Response.json(202, Self.changeAccepted)
        }
        routes.open.on(.post, "/ff/email/change/confirm", admit: small) { request, _ in
            let email = try await service.confirmChange(token: try Self.token(in: request))
            return Response.json(
                200,
                JSONWriter.bytes(
                    .object(JSONObject(uniqueMembers: [("changed", .bool(true)), ("email", .string(email))])))
            )
        }
    }

    /// What registration calls: the verification mail, whose failure is logged, not answered (the
    /// account stands, and the user can ask for the mail again).
    static func registrationMail(_ service: EmailAddressService, logger: Logger)
        -> @Sendable (String) async
        -> Void
    {
        { guid in
            do { try await service.registered(userGuid: guid) } catch {
                logger.error("verification mail at registration failed: \(error)")
            }
        }
    }

    private static func string(_ field: String, in body: JSONObject) throws -> String {
        guard let value = body[field] else { throw RoostError.missingField(field) }
        guard let text = value.stringValue else {
            throw RoostError.invalidField(field, "\(field) must be a string.")
        }
        return text
    }

    private static func token(in request: Request) throws -> String {
        let body = try ObjectRoutes.bodyObject(request)
        guard let token = body["token"] else { throw RoostError.missingField("token") }
        guard let text = token.stringValue else { throw RoostError.invalidEmailToken }
        return text
    }
}

extension Application {
    /// Verification and change, which need the dispatcher to send their mail.
    static func makeEmailAddresses(
        _ configuration: ServerConfiguration, storage: any Storage, accounts: AccountService,
        dispatcher: MailDispatcher?
    ) -> EmailAddressService {
        EmailAddressService(
            tokens: storage.emailTokens, accounts: accounts, failures: storage.loginFailures,
            options: configuration.mail.email,
            composer: dispatcher.flatMap { _ in
                configuration.mail.from.map {
                    MailComposer(from: $0, fromName: configuration.mail.reset.appName)
                }
            },
            appName: configuration.mail.reset.appName, queued: { dispatcher?.wake() })
    }
}
