import Foundation
import RoostCore
import RoostDrivers
import RoostPush
import RoostServer
import RoostStore

func pushHelp() -> String {
    var lines = [
        "Send a test notification to a user's devices, straight to APNs and FCM.",
        "",
        "USAGE:",
        "  roost push test --user NAME [--title TEXT] [--body TEXT] [provider options]",
        "                  [--data-dir PATH | --database URL]",
        "",
        "OPTIONS:",
        "  --user NAME                   the user (name or e-mail) whose devices receive it",
        "  --title TEXT                  the alert's title (default \"Roost\")",
        "  --body TEXT                   the alert's text (default \"A test notification from roost push test\")",
        "  --data-dir PATH               the server's data folder (default ./roost-data; env: ROOST_DATA_DIR)",
        "  --database URL                the PostgreSQL database instances share (env: ROOST_DATABASE_URL)",
    ]
    lines += ServeOption.helpLines(ServeOption.push)
    lines += [
        "  -h, --help                    show this help",
        "",
        "The provider options and their ROOST_* variables are those of 'roost serve', so the check",
        "uses the server's own settings. Each device the user registered gets the notification once,",
        "now, through one connection per gateway; nothing goes into the push outbox and nothing is",
        "retried. Each device's answer is printed. A token the provider calls invalid is reported,",
        "not deleted (a running server deletes it when it next sends there). The server may be",
        "running. Exit status: 0 when at least one device accepted it, 1 when none did or the user",
        "has no devices, 64 on a usage error, 78 when the provider settings cannot work.",
        "",
        "EXAMPLE:",
        "  roost push test --user alice --apns-key-file AuthKey_ABC123DEFG.p8 \\",
        "      --apns-key-id ABC123DEFG --apns-team-id DEF123GHIJ --data-dir /var/lib/roost",
    ]
    return lines.joined(separator: "\n")
}

/// `roost push test`: returns the exit status.
func push(_ arguments: [String]) async -> Int32 {
    if arguments.isEmpty || arguments.contains(where: { ["-h", "--help", "help"].contains($0) }) {
        print(pushHelp())
        return 0
    }
    guard arguments[0] == "test" else {
        printError("unknown action '\(arguments[0])'\nRun 'roost push --help' for the usage.")
        return 64
    }
    var userName: String?
    var title = "Roost"
    var body = "A test notification from roost push test"
    var database = CommandDatabase()
    var providerArguments: [String] = []
    var rest = arguments.dropFirst()
    while let argument = rest.popFirst() {
        let isOurs = ["--user", "--title", "--body", "--data-dir", "--database"].contains(argument)
        guard isOurs else {
            providerArguments.append(argument)
            continue
        }
        guard let value = rest.popFirst() else {
            printError("\(argument) needs a value\nRun 'roost push --help' for the options.")
            return 64
        }
        switch argument {
        case "--user": userName = value
        case "--title": title = value
        case "--body": body = value
        default: _ = database.take(argument, value: { value })
        }
    }
    guard let userName else {
        printError("'roost push test' needs --user NAME\nRun 'roost push --help' for the usage.")
        return 64
    }
    let settings: PushProviderSettings
    do {
        settings =
            try ServeOption.configuration(
                arguments: providerArguments, environment: ProcessInfo.processInfo.environment,
                options: ServeOption.push
            ).push.providers
    } catch let error as UsageError {
        printError("\(error.message)\nRun 'roost push --help' for the options.")
        return 64
    } catch {
        printError("\(error)")
        return 64
    }
    let sender: any PushSender
    do {
        guard let made = try StandardDrivers.pushSender(for: settings) else {
            printError(
                "no push provider is configured: give --apns-key-file, --apns-key-id and --apns-team-id, or --fcm-service-account (or their ROOST_* variables)"
            )
            return 78
        }
        sender = made
    } catch {
        printError("cannot send: \(error.description)")
        return 78
    }
    if let status = database.requireExisting() {
        await sender.shutdown()
        return status
    }
    do {
        let status = try await database.withStorage { storage in
            try await sendTest(
                PushNotification(title: title, body: body), toDevicesOf: userName, storage: storage,
                sender: sender)
        }
        await sender.shutdown()
        return status
    } catch {
        await sender.shutdown()
        printError("cannot send: \(error)")
        return 1
    }
}

/// Sends `notification` to every device of the user and prints each answer.
private func sendTest(
    _ notification: PushNotification, toDevicesOf userName: String, storage: any Storage,
    sender: any PushSender
) async throws -> Int32 {
    guard let account = try await storage.accountStore.account(identifiedBy: userName.lowercased()) else {
        printError("no user named '\(userName)'")
        return 1
    }
    let devices = try await storage.pushStore.devices(
        userGuid: account.userGuid, after: nil, limit: PushService.maximumDevicesPerUser,
        now: Int64(Date().timeIntervalSince1970 * 1000))
    guard !devices.isEmpty else {
        printError(
            "\(userName) has no devices with a push token: the app registers one with PUT /ff/push/devices/{deviceId}"
        )
        return 1
    }
    var accepted = 0
    for device in devices {
        let label =
            "\(device.deviceId) (\(device.platform)\(device.environment.map { " " + $0 } ?? ""), token …\(device.token.suffix(8)))"
        guard let platform = PushPlatform(rawValue: device.platform) else {
            say("\(label): skipped, unknown platform")
            continue
        }
        let target = PushTarget(
            platform: platform, token: device.token,
            environment: device.environment.flatMap(APNsEnvironment.init),
            bundleID: device.bundleID)
        switch await sender.send(notification, to: target) {
        case .delivered(let id):
            accepted += 1
            say("\(label): delivered\(id.map { " (\($0))" } ?? "")")
        case .invalidToken(let reason):
            say("\(label): invalid token, \(reason)")
        case .retry(_, let reason):
            say("\(label): not delivered, try again later: \(reason)")
        case .rejected(let reason):
            say("\(label): rejected, \(reason)")
        }
        if device.receiving == false { say("  (no live session on this device: the server would skip it)") }
    }
    return accepted > 0 ? 0 : 1
}
