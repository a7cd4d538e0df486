import RoostCore
import RoostStore
import Synchronization

/// What a script's calls reach beyond the data: push and mail. A service that is nil (no provider,
/// no mail server) makes its calls throw 501 `not_configured`.
public struct ScriptServices: Sendable {
    /// `sendPushNotifications`, `sendIOSPush`.
    public var push: ScriptPush?
    /// `sendEmail`, `sendSMTPEmail`.
    public var mail: ScriptMail?
    /// `executeFFDL`: where a change to the app definition is put in force.
    public var definitionChanges: (any AppDefinitionChanging)?

    public init(
        push: ScriptPush? = nil, mail: ScriptMail? = nil,
        definitionChanges: (any AppDefinitionChanging)? = nil
    ) {
        self.push = push
        self.mail = mail
        self.definitionChanges = definitionChanges
    }
}

/// What `sendEmail` needs: the mail outbox, the composer with the server's own sender (a script
/// never chooses the mail server nor the `From:` address), and a bound on messages per hour.
public struct ScriptMail: Sendable {
    let store: any MailStore
    let composer: MailComposer
    let clock: any WallClock
    let guids: any GuidGenerator
    let queued: @Sendable () -> Void
    let hourly: ScriptMailWindow

    /// Messages every script together may queue per hour on one server: an extension that mails
    /// whatever address its caller names must not make the server a relay for spam.
    public static let defaultHourlyLimit = 1000

    public init(
        store: any MailStore, composer: MailComposer, clock: any WallClock, guids: any GuidGenerator,
        hourlyLimit: Int = defaultHourlyLimit, queued: @escaping @Sendable () -> Void
    ) {
        self.store = store
        self.composer = composer
        self.clock = clock
        self.guids = guids
        self.queued = queued
        hourly = ScriptMailWindow(limit: hourlyLimit)
    }
}

/// Messages queued in the current clock hour, against a limit.
final class ScriptMailWindow: Sendable {
    let limit: Int
    private let state = Mutex<(hour: Int64, count: Int)>((0, 0))

    init(limit: Int) { self.limit = limit }

    /// Takes `count` messages from this hour's allowance; false (and nothing taken) when they do
    /// not fit. Also the seconds until the next hour.
    func take(_ count: Int, now: Int64) -> (taken: Bool, retryAfter: Int) {
        let hour = now / 3_600_000
        let retryAfter = Int(((hour + 1) * 3_600_000 - now + 999) / 1000)
        return state.withLock { state in
            if state.hour != hour { state = (hour, 0) }
            guard state.count + count <= limit else { return (false, retryAfter) }
            state.count += count
            return (true, retryAfter)
        }
    }
}

/// Messages one script run has queued: shared by the API's copies that act as other users.
final class ScriptMailCount: Sendable {
    private let count = Mutex(0)

    /// Adds `messages` unless the run would pass `limit`; whether it did.
    func add(_ messages: Int, limit: Int) -> Bool {
        count.withLock { count in
            guard count + messages <= limit else { return false }
            count += messages
            return true
        }
    }
}
