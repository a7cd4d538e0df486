import RoostCore

/// Which providers a server sends through; a platform left nil is not configured.
public struct PushConfiguration: Sendable {
    public var apns: APNsConfiguration?
    public var fcm: FCMConfiguration?

    public init(apns: APNsConfiguration? = nil, fcm: FCMConfiguration? = nil) {
        self.apns = apns
        self.fcm = fcm
    }
}

/// The one `PushSender` the core is given: each target goes to its platform's sender (APNs picks
/// the gateway by the target's environment); an unconfigured platform is refused.
public final class PushSenders: PushSender {
    public let apns: APNsSender?
    public let fcm: FCMSender?

    /// Reads the keys named by `configuration` and sets up the senders; throws what to fix.
    public convenience init(configuration: PushConfiguration, clock: any WallClock = SystemWallClock())
        throws(PushConfigurationError)
    {
        // Every file is read before any sender starts its thread, so a bad one leaves nothing running.
        let apnsKey = try configuration.apns.map { (apns) throws(PushConfigurationError) in
            try APNsSender.loadKey(apns)
        }
        let fcmAccount = try configuration.fcm.map { (fcm) throws(PushConfigurationError) in
            try FCMSender.ServiceAccount(file: fcm.serviceAccountFile)
        }
        var apns: APNsSender?
        if let settings = configuration.apns, let apnsKey {
            apns = APNsSender(configuration: settings, key: apnsKey, clock: clock)
        }
        var fcm: FCMSender?
        if let settings = configuration.fcm, let fcmAccount {
            fcm = FCMSender(configuration: settings, account: fcmAccount, clock: clock)
        }
        self.init(apns: apns, fcm: fcm)
    }

    public init(apns: APNsSender?, fcm: FCMSender?) {
        self.apns = apns
        self.fcm = fcm
    }

    public func send(_ notification: PushNotification, to target: PushTarget) async -> PushOutcome {
        switch target.platform {
        case .apns:
            guard let apns else { return .rejected(reason: "apns is not configured") }
            return await apns.send(notification, to: target)
        case .fcm:
            guard let fcm else { return .rejected(reason: "fcm is not configured") }
            return await fcm.send(notification, to: target)
        }
    }

    public func shutdown() async {
        await apns?.shutdown()
        await fcm?.shutdown()
    }
}
