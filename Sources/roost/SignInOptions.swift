import Foundation
import RoostCore
import RoostServer

/// `roost serve` options for Sign in with Apple and Google.
extension ServeOption {
    static let signIn: [ServeOption] =
        SignInProvider.allCases.flatMap(providerOptions) + [
            ServeOption(
                flag: "--sign-in-link-verified-emails", variable: "ROOST_SIGN_IN_LINK_VERIFIED_EMAILS",
                valueName: "on|off",
                help: "'on': a provider's verified email links to the account with that email (default off)"
            ) {
                guard $1 == "on" || $1 == "off" else {
                    throw UsageError(
                        message: "--sign-in-link-verified-emails takes 'on' or 'off', not '\($1)'")
                }
                $0.signIn.linkVerifiedEmails = $1 == "on"
            },
            ServeOption(
                flag: "--sign-in-ca-file", variable: "ROOST_SIGN_IN_CA_FILE", valueName: "PATH",
                help: "PEM certificates to trust for the providers' key sets instead of the system's"
            ) { $0.signIn.caFile = $1 },
            ServeOption(
                flag: "--sign-in-key-refetch", variable: "ROOST_SIGN_IN_KEY_REFETCH", valueName: "SECONDS",
                help: "least time between two fetches of a provider's keys for unknown key ids (default 60)"
            ) {
                $0.signIn.keyRefetchInterval = try integer($1, flag: "--sign-in-key-refetch", range: 1...3600)
            },
        ]

    private static func providerOptions(_ provider: SignInProvider) -> [ServeOption] {
        let name = provider.rawValue
        let upper = name.uppercased()
        let display = provider == .apple ? "Apple" : "Google"
        return [
            ServeOption(
                flag: "--\(name)-client-ids", variable: "ROOST_\(upper)_CLIENT_IDS", valueName: "IDS",
                help: provider == .apple
                    ? "comma-separated bundle ids and services ids Apple's tokens may be for (turns Apple on)"
                    : "comma-separated OAuth client ids Google's tokens may be for (turns Google on)"
            ) { configuration, value in
                let ids = value.split(separator: ",").map { String($0).trimmingCharacters(in: .whitespaces) }
                guard !ids.isEmpty, ids.allSatisfy({ !$0.isEmpty && $0.utf8.count <= 256 }) else {
                    throw UsageError(message: "--\(name)-client-ids takes comma-separated client ids")
                }
                configuration.signIn[provider].clientIds = ids
            },
            ServeOption(
                flag: "--\(name)-issuer", variable: "ROOST_\(upper)_ISSUER", valueName: "URL",
                help: "the iss of \(display)'s tokens (default \(provider.defaultIssuer))"
            ) { $0.signIn[provider].issuer = $1 },
            ServeOption(
                flag: "--\(name)-keys-url", variable: "ROOST_\(upper)_KEYS_URL", valueName: "URL",
                help: "\(display)'s key set, a JWKS (default \(provider.defaultKeysURL))"
            ) { configuration, value in
                guard value.hasPrefix("https://") else {
                    throw UsageError(message: "--\(name)-keys-url takes an https:// URL, not '\(value)'")
                }
                configuration.signIn[provider].keysURL = value
            },
        ]
    }
}
