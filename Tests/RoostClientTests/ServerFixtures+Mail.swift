import Foundation
import RoostCore
import RoostDrivers
import RoostServer
import RoostTestSupport

/// A server with `required` verification whose mail goes to `smtp`.
func makeMailServer(_ smtp: FakeSMTP) async throws -> TestServer {
    var settings = SMTPSettings()
    settings.url = smtp.url
    settings.startTLS = "off"
    let sender = try StandardDrivers.mailSender(for: settings, environment: [:])
    let definition = try AppDefinition.parse(Array(openDefinition.utf8))
    return try await TestServer { configuration in
        configuration.appDefinition = definition
        configuration.passwordHasher = PasswordHasher.cheapForTests()
        configuration.mail.sender = sender
        configuration.mail.from = "noreply@roost.test"
        configuration.mail.dispatch.pollInterval = .milliseconds(50)
        configuration.mail.email.verification = .required
    }
}
