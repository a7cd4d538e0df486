/// The push tables and statements, the same on SQLite and PostgreSQL; `clock` is the
/// database's wall-clock milliseconds as an SQL expression (for the lease only: deliveries are
/// timed by Roost's clock, which tests control).
struct PushSQL: Sendable {
    let clock: String

    /// The tables. Deliveries are fanned out at enqueue (one row per device, with its own
    /// outcome and retries); the device's token is read at send time, so one that moved goes
    /// along.
    static let schema = """
        CREATE TABLE push_devices (
            user_guid TEXT NOT NULL REFERENCES accounts (user_guid) ON DELETE CASCADE,
            device_id TEXT NOT NULL,
            platform TEXT NOT NULL,
            token TEXT NOT NULL,
            environment TEXT,
            bundle_id TEXT NOT NULL,
            created_at BIGINT NOT NULL,
            updated_at BIGINT NOT NULL,
            PRIMARY KEY (user_guid, device_id)
        );
        CREATE UNIQUE INDEX push_devices_by_token ON push_devices (platform, token);
        CREATE TABLE push_messages (
            id TEXT PRIMARY KEY,
            notification TEXT NOT NULL,
            created_at BIGINT NOT NULL,
            created_by TEXT,
            targeted BIGINT NOT NULL
        );
        CREATE TABLE push_outbox (
            push_id TEXT NOT NULL REFERENCES push_messages (id) ON DELETE CASCADE,
            user_guid TEXT NOT NULL,
            device_id TEXT NOT NULL,
            state TEXT NOT NULL,
            attempts INTEGER NOT NULL,
            next_attempt BIGINT NOT NULL,
            claimed_by TEXT,
            uncertain INTEGER NOT NULL DEFAULT 0,
            error TEXT,
            provider_id TEXT,
            updated_at BIGINT NOT NULL,
            PRIMARY KEY (push_id, user_guid, device_id)
        );
        CREATE INDEX push_outbox_due ON push_outbox (state, next_attempt);
        CREATE INDEX push_outbox_finished ON push_outbox (state, updated_at);
        CREATE TABLE push_dispatch (
            id INTEGER PRIMARY KEY CHECK (id = 1),
            holder TEXT,
            lease_until BIGINT NOT NULL DEFAULT 0
        );
        INSERT INTO push_dispatch (id) VALUES (1);
        """

    static let deviceColumns =
        "user_guid, device_id, platform, token, environment, bundle_id, created_at, updated_at"

    static func device(_ row: some DatabaseRow) -> PushDeviceRecord {
        PushDeviceRecord(
            userGuid: row.text(0) ?? "", deviceId: row.text(1) ?? "", platform: row.text(2) ?? "",
            token: row.text(3) ?? "", environment: row.text(4), bundleID: row.text(5) ?? "",
            createdAt: row.integer(6), updatedAt: row.integer(7))
    }

    /// A live session of the outbox row or device row `alias` names, at `now`.
    static func liveSession(_ alias: String, now: Int64) -> SQL {
        """
        EXISTS (SELECT 1 FROM tokens t WHERE t.user_guid = \(raw: alias).user_guid
            AND t.device_id = \(raw: alias).device_id
            AND (t.expires_at > \(now) OR t.refresh_expires_at > \(now)))
        """
    }

    func register(_ connection: some SQLRunning, _ device: PushDeviceRecord, limit: Int) throws
        -> PushDeviceRecord
    {
        // The token moves with its device: one row per token.
        try connection.run(
            """
            DELETE FROM push_devices WHERE platform = \(device.platform) AND token = \(device.token)
            AND NOT (user_guid = \(device.userGuid) AND device_id = \(device.deviceId))
            """)
        let existing = try connection.first(
            """
            SELECT created_at FROM push_devices WHERE user_guid = \(device.userGuid) AND device_id = \(device.deviceId)
            """
        ) { $0.integer(0) }
        if existing == nil {
            let others =
                try connection.first(
                    "SELECT count(*) FROM push_devices WHERE user_guid = \(device.userGuid)"
                ) { $0.integer(0) } ?? 0
            if others >= Int64(limit) { throw PushStoreError.tooManyDevices(limit: limit) }
        }
        var stored = device
        stored.createdAt = existing ?? device.createdAt
        try connection.run(
            """
            INSERT INTO push_devices (\(raw: Self.deviceColumns)) VALUES (\(stored.userGuid), \(stored.deviceId),
            \(stored.platform), \(stored.token), \(stored.environment), \(stored.bundleID), \(stored.createdAt),
            \(stored.updatedAt))
            ON CONFLICT (user_guid, device_id) DO UPDATE SET platform = excluded.platform, token = excluded.token,
            environment = excluded.environment, bundle_id = excluded.bundle_id, updated_at = excluded.updated_at
            """)
        return stored
    }

    func enqueue(
        _ connection: some SQLRunning, id: String, notification: String, audience: PushAudience,
        createdBy: String?, now: Int64
    ) throws -> Int {
        try connection.run(
            """
            INSERT INTO push_messages (id, notification, created_at, created_by, targeted)
            VALUES (\(id), \(notification), \(now), \(createdBy), 0)
            """)
        let insert: SQL = """
            INSERT INTO push_outbox (push_id, user_guid, device_id, state, attempts, next_attempt, updated_at)
            SELECT \(id), d.user_guid, d.device_id, 'pending', 0, \(now), \(now) FROM push_devices d
            WHERE \(Self.liveSession("d", now: now)) AND d.user_guid = 
            """
        var targeted = 0
        switch audience {
        case .users(let users):
            for user in users {
                targeted += try connection.run(insert + "\(user) ON CONFLICT DO NOTHING")
            }
        case .devices(let devices):
            for device in devices {
                targeted += try connection.run(
                    insert + "\(device.userGuid) AND d.device_id = \(device.deviceId) ON CONFLICT DO NOTHING")
            }
        }
        try connection.run("UPDATE push_messages SET targeted = \(targeted) WHERE id = \(id)")
        return targeted
    }

    func claim(_ connection: some SQLRunning, holder: String, for duration: Duration) throws -> Bool {
        try connection.run(
            """
            UPDATE push_dispatch SET holder = \(holder), lease_until = \(raw: clock) + \(milliseconds(duration))
            WHERE id = 1 AND (holder = \(holder) OR lease_until <= \(raw: clock))
            """) == 1
    }

    func release(_ connection: some SQLRunning, holder: String) throws {
        try connection.run(
            "UPDATE push_dispatch SET holder = NULL, lease_until = 0 WHERE id = 1 AND holder = \(holder)")
    }

    func hasWork(_ connection: some SQLRunning, now: Int64, instance: String) throws -> Bool {
        try connection.first(
            """
            SELECT 1 FROM push_outbox WHERE (state = 'pending' AND next_attempt <= \(now))
            OR (state = 'sending' AND claimed_by <> \(instance)) LIMIT 1
            """
        ) { _ in true } ?? false
    }

    func claimDue(_ connection: some SQLRunning, now: Int64, limit: Int, holder: String, instance: String)
        throws -> [PushDelivery]
    {
        let held = try connection.first(
            "SELECT 1 FROM push_dispatch WHERE id = 1 AND holder = \(holder)", { _ in true })
        guard held == true else { return [] }
        // Left in flight by a dispatcher that died (or lost the lease): its answer is unknown.
        try connection.run(
            """
            UPDATE push_outbox SET state = 'pending', uncertain = 1, next_attempt = \(now)
            WHERE state = 'sending' AND claimed_by <> \(instance)
            """)
        try connection.run(
            """
            UPDATE push_outbox SET state = 'skipped', error = 'no live session for the device', updated_at = \(now)
            WHERE state = 'pending' AND next_attempt <= \(now) AND NOT \(Self.liveSession("push_outbox", now: now))
            """)
        try connection.run(
            """
            UPDATE push_outbox SET state = 'skipped', error = 'the device has no push token', updated_at = \(now)
            WHERE state = 'pending' AND next_attempt <= \(now) AND NOT EXISTS (SELECT 1 FROM push_devices d
                WHERE d.user_guid = push_outbox.user_guid AND d.device_id = push_outbox.device_id)
            """)
        let due = try connection.query(
            """
            SELECT o.push_id, o.user_guid, o.device_id, o.attempts, d.platform, d.token, d.environment, d.bundle_id,
                m.notification, o.uncertain
            FROM push_outbox o JOIN push_devices d ON d.user_guid = o.user_guid AND d.device_id = o.device_id
            JOIN push_messages m ON m.id = o.push_id
            WHERE o.state = 'pending' AND o.next_attempt <= \(now)
            ORDER BY o.next_attempt, o.push_id, o.user_guid, o.device_id LIMIT \(Int64(limit))
            """
        ) { row in
            PushDelivery(
                pushID: row.text(0) ?? "", userGuid: row.text(1) ?? "", deviceId: row.text(2) ?? "",
                attempts: Int(row.integer(3)) + 1, platform: row.text(4) ?? "", token: row.text(5) ?? "",
                environment: row.text(6), bundleID: row.text(7) ?? "", notification: row.text(8) ?? "",
                uncertain: row.integer(9) != 0)
        }
        // In flight before the send: a crash leaves it 'sending', never lost.
        for delivery in due {
            try connection.run(
                """
                UPDATE push_outbox SET state = 'sending', claimed_by = \(instance), attempts = attempts + 1,
                updated_at = \(now)
                WHERE push_id = \(delivery.pushID) AND user_guid = \(delivery.userGuid) AND device_id = \(delivery.deviceId)
                """)
        }
        return due
    }

    func record(
        _ connection: some SQLRunning, _ outcome: PushRecordedOutcome, pushID: String, userGuid: String,
        deviceId: String, token: String, instance: String, now: Int64
    ) throws -> Bool {
        let state: PushDeliveryState
        var next: Int64 = now
        var error: String?
        var providerID: String?
        switch outcome {
        case .delivered(let id):
            state = .delivered
            providerID = id.map { String($0.prefix(256)) }
        case .invalidToken(let reason):
            state = .invalid
            error = reason
        case .retry(let nextAttempt, let reason):
            state = nextAttempt == nil ? .failed : .pending
            next = nextAttempt ?? now
            error = reason
        case .rejected(let reason):
            state = .rejected
            error = reason
        }
        let updated = try connection.run(
            """
            UPDATE push_outbox SET state = \(state.rawValue), next_attempt = \(next), error = \(error.map { String($0.prefix(1024)) }),
            provider_id = \(providerID), updated_at = \(now), claimed_by = NULL
            WHERE push_id = \(pushID) AND user_guid = \(userGuid) AND device_id = \(deviceId)
            AND state = 'sending' AND claimed_by = \(instance)
            """)
        guard updated == 1, case .invalidToken = outcome else { return false }
        // Only the token the provider refused: a device that registered a new one since keeps it.
        return try connection.run(
            """
            DELETE FROM push_devices WHERE user_guid = \(userGuid) AND device_id = \(deviceId) AND token = \(token)
            """) == 1
    }

    func prune(_ connection: some SQLRunning, before cutoff: Int64) throws {
        try connection.run(
            """
            DELETE FROM push_outbox WHERE state IN ('delivered', 'failed', 'rejected', 'invalid', 'skipped')
            AND updated_at < \(cutoff)
            """)
        try connection.run(
            """
            DELETE FROM push_messages WHERE created_at < \(cutoff)
            AND NOT EXISTS (SELECT 1 FROM push_outbox o WHERE o.push_id = push_messages.id)
            """)
    }

    func status(_ connection: some SQLRunning, id: String, limit: Int) throws -> PushStatus? {
        guard
            var status = try connection.first(
                "SELECT id, created_at, created_by, targeted FROM push_messages WHERE id = \(id)",
                {
                    row in
                    PushStatus(
                        id: row.text(0) ?? "", createdAt: row.integer(1), createdBy: row.text(2),
                        targeted: Int(row.integer(3)), deliveries: [])
                })
        else { return nil }
        status.deliveries = try connection.query(
            """
            SELECT user_guid, device_id, state, attempts, error, provider_id, updated_at FROM push_outbox
            WHERE push_id = \(id) ORDER BY user_guid, device_id LIMIT \(Int64(limit))
            """
        ) { row in
            PushDeliveryStatus(
                userGuid: row.text(0) ?? "", deviceId: row.text(1) ?? "",
                state: PushDeliveryState(rawValue: row.text(2) ?? "") ?? .pending,
                attempts: Int(row.integer(3)), error: row.text(4), providerID: row.text(5),
                updatedAt: row.integer(6))
        }
        return status
    }

    private func milliseconds(_ duration: Duration) -> Int64 {
        duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000
    }
}
