import RoostServer

/// `roost serve` options for push notifications: the providers' key files and addresses.
extension ServeOption {
    static let push: [ServeOption] = [
        ServeOption(
            flag: "--apns-key-file", variable: "ROOST_APNS_KEY_FILE", valueName: "PATH",
            help: "APNs token authentication: the .p8 key file (with --apns-key-id and --apns-team-id)"
        ) { $0.push.providers.apnsKeyFile = $1 },
        ServeOption(
            flag: "--apns-key-id", variable: "ROOST_APNS_KEY_ID", valueName: "ID",
            help: "the APNs key's 10-character key id"
        ) { $0.push.providers.apnsKeyID = $1 },
        ServeOption(
            flag: "--apns-team-id", variable: "ROOST_APNS_TEAM_ID", valueName: "ID",
            help: "the Apple developer team id the key belongs to"
        ) { $0.push.providers.apnsTeamID = $1 },
        ServeOption(
            flag: "--apns-url", variable: "ROOST_APNS_URL", valueName: "URL",
            help: "the APNs production gateway (default https://api.push.apple.com)"
        ) { $0.push.providers.apnsProductionURL = $1 },
        ServeOption(
            flag: "--apns-sandbox-url", variable: "ROOST_APNS_SANDBOX_URL", valueName: "URL",
            help: "the APNs sandbox gateway (default https://api.sandbox.push.apple.com)"
        ) { $0.push.providers.apnsSandboxURL = $1 },
        ServeOption(
            flag: "--fcm-service-account", variable: "ROOST_FCM_SERVICE_ACCOUNT", valueName: "PATH",
            help: "FCM HTTP v1: the service account's JSON key file"
        ) { $0.push.providers.fcmServiceAccountFile = $1 },
        ServeOption(
            flag: "--fcm-url", variable: "ROOST_FCM_URL", valueName: "URL",
            help: "the FCM endpoint (default https://fcm.googleapis.com)"
        ) { $0.push.providers.fcmBaseURL = $1 },
        ServeOption(
            flag: "--push-ca-file", variable: "ROOST_PUSH_CA_FILE", valueName: "PATH",
            help:
                "PEM certificates to trust for the push gateways instead of the system's (private gateways, tests)"
        ) { $0.push.providers.caFile = $1 },
    ]
}
